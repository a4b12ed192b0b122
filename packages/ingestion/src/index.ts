/**
 * @ocs/ingestion: the webhook receiver. Verify, store durably, answer 200 fast, dedupe
 * redeliveries (docs/architecture.md, section 6).
 */
export * as DedupeKey from "./DedupeKey.ts"
export * as Ingestion from "./Ingestion.ts"
export * as IngestionMetrics from "./IngestionMetrics.ts"
export * as SourceAddresses from "./SourceAddresses.ts"
export * as WebhookApps from "./WebhookApps.ts"
