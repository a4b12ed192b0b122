/** An id as a caller of the control API may pass it: JSON integer (number or bigint) or decimal string. */
import { Schema } from "effect"

export type Id = string | number | bigint
export const Id = Schema.Union([Schema.String, Schema.Number, Schema.BigInt])
