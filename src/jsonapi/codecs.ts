// Codecs per attribute type: a database value (as the driver returned it) to its API value.
import type { DialectTraits } from '../db/dialect-traits.js';
import type { AttributeType } from './resource.js';

export type Decoder = (value: unknown) => unknown;

export function decoderFor(type: AttributeType, traits: DialectTraits): Decoder {
  switch (type) {
    case 'string':
      return (v) => (v === null || v === undefined ? null : String(v));
    case 'integer':
    case 'number':
      // pg returns bigint and numeric as strings.
      return (v) => (v === null || v === undefined ? null : Number(v));
    case 'id':
      return (v) => (v === null || v === undefined ? null : String(v));
    case 'boolean':
      return (v) => traits.decodeBoolean(v);
    case 'datetime':
      return (v) => traits.decodeTimestamp(v);
    case 'json':
      return (v) => traits.decodeJson(v);
  }
}
