// OpenTelemetry traces (src/observability/tracing.ts): the W3C traceparent of the request that
// made an event, kept with the event, so that each of its webhook attempts, whenever and by
// whichever process it is made, is a span in that request's trace. One nullable text column: null
// for events made with traces off or outside a traced request (the CLI), and for every event from
// before this migration. Adding a nullable column without a default rewrites no rows.
import type { Kysely } from 'kysely';
import type { DialectTraits } from '../dialect-traits.js';
import type { AppMigration } from './index.js';

export const traceContext: AppMigration = {
  name: '0021_trace_context',
  summary: 'Adds outbox_events.trace_parent (the W3C traceparent of the request that made an event).',
  rewritesLargeTable: false,
  async up(db: Kysely<unknown>, _t: DialectTraits) {
    await db.schema.alterTable('outbox_events').addColumn('trace_parent', 'text').execute();
  },
};
