import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import type { LogRecord } from "@ocs/event-log"

/** A fresh directory under the OS temp dir for one test's SQLite files. */
export const tempDir = (prefix = "event-log-"): string => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix))

export const webhook = (
  businessId: string | null,
  body: string,
  extra: Partial<LogRecord.NewRecord> = {}
): LogRecord.NewRecord => ({
  appId: "9007199254740993123",
  businessId,
  source: "webhook",
  type: "orderAdd",
  body,
  ...extra
})

export const APP = "9007199254740993123"
