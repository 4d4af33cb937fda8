// What the demo data set (src/demo) leaves empty, for the demo suites.

/**
 * Resources the demo holds no records of: webhook events, their deliveries and the deliveries'
 * attempts are made only by writes through the API (the outbox renders each event's records as GET
 * does, in the writing transaction, and the worker attempts them), while the demo is written in
 * bulk beside the domain. They fill as soon as a hook sees a write; test/webhooks/events.test.ts,
 * delivery-log.test.ts and test/resources/webhook-deliveries.test.ts cover their filters and enums.
 */
export const MADE_BY_API_WRITES: ReadonlySet<string> = new Set([
  'webhook_deliveries',
  'webhook_attempts',
  'events',
  // The sandbox's mailbox (what writes send) and faults (made by POST /v1/test_helpers/faults).
  'messages',
  'faults',
]);
