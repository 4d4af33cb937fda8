// The `payload` of a webhook: the records an event is about, as JSON:API resource objects in the
// upstream's order for the event (its `GET /v1/hooks/<event>_sample`). Samples and real events
// are rendered by the engine's one renderer, exactly as `GET /v1/<type>/<id>` renders a record,
// and checked against the same PAYLOAD_TYPES, so a sample cannot drift from a delivery. A real
// event renders rows the engine's executor reads inside the writing transaction (with
// SQL-computed attributes and the linkage of to-many relationships: WriteContext.render, called
// by src/domain/outbox.ts); a sample renders synthetic rows with id 0.
import type { ResourceObject } from '../jsonapi/document.js';
import type { JsonApiEngine } from '../jsonapi/engine.js';
import { LINKAGE, type LinkedRow } from '../jsonapi/executor.js';
import type { ResourceDefinition } from '../jsonapi/resource.js';

/** The types of an event's payload, in the upstream order; the last may repeat (order items). */
export const PAYLOAD_TYPES: Readonly<Record<string, readonly string[]>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, readonly string[]>, {
    purchase: ['purchases', 'offers', 'customers'],
    payment_succeeded: ['transactions', 'customers'],
    order_created: ['transactions', 'customers', 'orders', 'order_items'],
    form_submission: ['form_submissions', 'forms'],
    tag_added: ['contacts', 'contact_tags'],
    tag_removed: ['contacts', 'contact_tags'],
  }),
);

/** One record of a payload: its type and its row. */
export interface PayloadRecord {
  type: string;
  row: LinkedRow;
}

/** Throws unless records of these types, in this order, make a payload of `event`. */
export function checkPayloadTypes(event: string, recordTypes: readonly string[]): void {
  const types = PAYLOAD_TYPES[event];
  if (!types) throw new Error(`no webhook event ${event}`);
  recordTypes.forEach((type, i) => {
    const expected = types[Math.min(i, types.length - 1)];
    if (type !== expected) throw new Error(`${event} payload: record ${i} must be ${expected}, not ${type}`);
  });
}

/** The payload of `event` about these records (checked against the event's shape). */
export function buildPayload(engine: JsonApiEngine, event: string, records: readonly PayloadRecord[]): ResourceObject[] {
  checkPayloadTypes(event, records.map((r) => r.type));
  return records.map((record) => engine.renderRecord(engine.registry.get(record.type), record.row));
}

// --- Samples -----------------------------------------------------------------------------------

const SAMPLE_AT = '2025-07-31T16:51:04.010Z';

/**
 * What the upstream samples show, by type and column (the database's names, as a real row has
 * them). Columns not named here are filled from the declaration (see sampleRow).
 */
const SAMPLE_VALUES: Record<string, Record<string, unknown>> = {
  contacts: {
    name: 'Sample Recipient',
    email: 'sample@example.com',
    address_line_1: '123 Kajabi Ln',
    address_line_2: 'Kajabi Suite 4',
    address_city: 'Kajabiwood',
    address_country: 'United Sites of Kajabi',
    address_state: 'Kajabifornia',
    address_zip: '99999',
    phone_number: '5555555555',
    subscribed: false,
  },
  contact_tags: { name: 'Tag' },
  form_submissions: { name: 'John Doe', email: 'john.doe@example.com' },
  forms: { title: 'Sample Form', url: 'https://example.com/forms/0', is_default: false },
  purchases: { amount_in_cents: 1000, payment_type: 'one_time', opt_in: false, raw_extra_contact_information: {}, currency: 'USD', quantity: 1 },
  offers: {
    title: 'Sample Offer',
    currency: 'USD',
    price_in_cents: 1000,
    payment_type: 'one_time',
    token: 'n8NtoHUZ',
    payment_method: 'kajabi_payments',
    price_description: '$10.00',
    checkout_url: 'https://example.mykajabi.com/offers/n8NtoHUZ/checkout',
    single: true,
  },
  customers: { name: 'John Doe', email: 'john.doe@example.com', avatar_url: null, net_revenue_cents: 1000, sign_in_count: 0 },
  transactions: { action: 'charge', state: 'succeeded', payment_type: 'one_time', amount_in_cents: 1000, sales_tax_in_cents: 0, currency: 'USD' },
  orders: {
    order_number: 1001,
    currency_code: 'USD',
    total_price_in_cents: 1000,
    subtotal_in_cents: 1000,
    sales_tax_amount_in_cents: 0,
    discount_amount_in_cents: 0,
  },
  order_items: {
    quantity: 1,
    currency_code: 'USD',
    item_type: 'Offer',
    item_id: 0,
    title: 'Sample Offer',
    total_price_in_cents: 1000,
    subtotal_in_cents: 1000,
    sales_tax_amount_in_cents: 0,
    discount_amount_in_cents: 0,
  },
};

/** A value of the attribute's type for a required attribute the sample does not name. */
const FILLER: Record<string, unknown> = { string: '', integer: 0, number: 0, boolean: false, datetime: SAMPLE_AT, json: {}, id: '0' };

/**
 * A synthetic row of `resource` with id 0, shaped like the rows the executor reads: every column
 * an attribute reads (sample value, else null when nullable, else a filler of its type), the
 * site's id in the tenancy column, 0 in every other to-one key (the related sample records are
 * id 0 too), and empty linkage for the to-many relationships GET renders linkage of.
 */
function sampleRow(resource: ResourceDefinition, siteId: number | null): LinkedRow {
  const values = SAMPLE_VALUES[resource.type] ?? {};
  const row: LinkedRow = { id: 0 };
  const has = (column: string) => Object.hasOwn(values, column);
  for (const [name, a] of Object.entries(resource.attributes)) {
    if (a.compute) {
      for (const column of a.compute.columns) row[column] = has(column) ? values[column] : (row[column] ?? null);
      continue;
    }
    const column = a.column === '' ? name : a.column;
    row[column] = has(column) ? values[column] : a.type === 'datetime' && !a.nullable ? SAMPLE_AT : a.nullable ? null : FILLER[a.type];
  }
  const siteColumn = resource.tenancy.kind === 'site' ? resource.tenancy.column : undefined;
  const linkage = new Map<string, string[]>();
  for (const [name, relationship] of Object.entries(resource.relationships)) {
    if (relationship.kind === 'to-one') row[relationship.foreignKey] = relationship.foreignKey === siteColumn ? siteId : 0;
    else if (relationship.kind !== 'has-one' && relationship.linkage) linkage.set(name, []);
  }
  row[LINKAGE] = linkage;
  return row;
}

/** `GET /v1/hooks/<event>_sample`: the event's payload built from synthetic records with id 0. */
export function samplePayload(engine: JsonApiEngine, event: string, siteId: number | null): ResourceObject[] {
  const types = PAYLOAD_TYPES[event];
  if (!types) throw new Error(`no webhook event ${event}`);
  return buildPayload(
    engine,
    event,
    types.map((type) => ({ type, row: sampleRow(engine.registry.get(type), siteId) })),
  );
}
