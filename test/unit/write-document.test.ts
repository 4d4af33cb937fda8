// Request documents of writes, pure: readResourceDocument and readRelationshipDocument turn a body
// into a checked write or throw one ApiError listing every problem with its source.pointer.
// (No database is involved, so these run once rather than per dialect.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/jsonapi/errors.js';
import { attr, defineResource, rel } from '../../src/jsonapi/resource.js';
import { readRelationshipDocument, readResourceDocument, throwProblems, type WriteRules } from '../../src/jsonapi/write-document.js';

const notes = defineResource({
  type: 'notes',
  table: 'notes',
  description: 'fixture',
  readPermission: null,
  tenancy: { kind: 'site', column: 'site_id' },
  attributes: {
    body: attr.string(),
    title: attr.string({ nullable: true }),
    pinned: attr.boolean(),
    rank: attr.integer({ nullable: true }),
    score: attr.number({ nullable: true }),
    due_at: attr.datetime({ nullable: true }),
    owner_id: attr.id({ nullable: true }),
    extra: attr.json({ nullable: true }),
    created_at: attr.datetime(),
  },
  relationships: { contact: rel.toOne('contacts', 'contact_id'), tags: rel.toManyThrough('tags', { table: 't', sourceKey: 'a', targetKey: 'b' }) },
});

const RULES: WriteRules = {
  writable: ['body', 'title', 'pinned', 'rank', 'score', 'due_at', 'owner_id', 'extra'],
  required: ['body'],
  relationships: { contact: { required: true }, tags: { required: false } },
};
const CREATE = { create: true } as const;
const contact = { data: { type: 'contacts', id: '7' } };

/** The ApiError a call throws: its status and its errors as [code, pointer] pairs. */
function problems(fn: () => unknown): { status: number; errors: Array<[string, string | undefined]> } {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ApiError, `expected an ApiError, got ${String(error)}`);
    return { status: error.status, errors: error.errors.map((e) => [e.code, e.source?.pointer]) };
  }
  assert.fail('expected the document to be refused');
}

describe('readResourceDocument', () => {
  it('reads a create: coerced attributes, relationship ids as numbers, meta', () => {
    const write = readResourceDocument(
      notes,
      {
        data: {
          type: 'notes',
          attributes: { body: 'b', title: null, pinned: true, rank: 3, score: 1.5, due_at: '2026-01-02T03:04:05Z', owner_id: '12', extra: { a: [1] } },
          relationships: { contact, tags: { data: [{ type: 'tags', id: '1' }, { type: 'tags', id: '2' }] } },
        },
        meta: { send: true },
      },
      RULES,
      CREATE,
    );
    assert.deepEqual(write.attributes, {
      body: 'b',
      title: null,
      pinned: true,
      rank: 3,
      score: 1.5,
      due_at: new Date('2026-01-02T03:04:05Z'),
      owner_id: 12,
      extra: { a: [1] },
    });
    assert.deepEqual(write.relationships, { contact: 7, tags: [1, 2] });
    assert.deepEqual(write.meta, { send: true });
  });

  it('reads an update whose id matches the path; required members are not required', () => {
    const write = readResourceDocument(notes, { data: { type: 'notes', id: '5', attributes: { title: 'x' } } }, RULES, { create: false, id: '5' });
    assert.deepEqual(write.attributes, { title: 'x' });
    assert.deepEqual(write.relationships, {});
  });

  it('a to-one relationship may be emptied with null', () => {
    const write = readResourceDocument(notes, { data: { type: 'notes', id: '5', relationships: { contact: { data: null } } } }, RULES, { create: false, id: '5' });
    assert.deepEqual(write.relationships, { contact: null });
  });

  // [what, body, mode, status, [code, pointer] of every error]
  const update5 = { create: false, id: '5' } as const;
  const REFUSED: Array<[string, unknown, typeof CREATE | typeof update5, number, Array<[string, string]>]> = [
    ['no body', undefined, CREATE, 400, [['invalid_document', '']]],
    ['an array body', [], CREATE, 400, [['invalid_document', '']]],
    ['no data', {}, CREATE, 400, [['invalid_document', '/data']]],
    ['data null', { data: null }, CREATE, 400, [['invalid_document', '/data']]],
    ['data an array', { data: [] }, CREATE, 400, [['invalid_document', '/data']]],
    ['an unknown top-level member', { data: { type: 'notes', attributes: { body: 'b' }, relationships: { contact } }, extra: 1 }, CREATE, 400, [['invalid_document', '/extra']]],
    ['an unknown member of data', { data: { type: 'notes', attributes: { body: 'b' }, relationships: { contact }, foo: 1 } }, CREATE, 400, [['invalid_document', '/data/foo']]],
    ['no type', { data: { attributes: { body: 'b' }, relationships: { contact } } }, CREATE, 400, [['missing_type', '/data/type']]],
    ['a wrong type', { data: { type: 'people', attributes: { body: 'b' }, relationships: { contact } } }, CREATE, 409, [['type_mismatch', '/data/type']]],
    ['a client id on create', { data: { type: 'notes', id: '9', attributes: { body: 'b' }, relationships: { contact } } }, CREATE, 403, [['client_id_unsupported', '/data/id']]],
    ['no id on update', { data: { type: 'notes', attributes: {} } }, update5, 400, [['missing_id', '/data/id']]],
    ['a numeric id on update', { data: { type: 'notes', id: 5 } }, update5, 400, [['invalid_id', '/data/id']]],
    ['a mismatched id on update', { data: { type: 'notes', id: '6' } }, update5, 409, [['id_mismatch', '/data/id']]],
    ['a wrong type on update', { data: { type: 'people', id: '5' } }, update5, 409, [['type_mismatch', '/data/type']]],
    ['attributes not an object', { data: { type: 'notes', id: '5', attributes: [] } }, update5, 400, [['invalid_document', '/data/attributes']]],
    ['an unknown attribute', { data: { type: 'notes', id: '5', attributes: { colour: 'red' } } }, update5, 422, [['unknown_attribute', '/data/attributes/colour']]],
    ['an inherited name as attribute', { data: { type: 'notes', id: '5', attributes: { constructor: 'x', toString: 'y' } } }, update5, 422, [
      ['unknown_attribute', '/data/attributes/constructor'],
      ['unknown_attribute', '/data/attributes/toString'],
    ]],
    ['a read-only attribute', { data: { type: 'notes', id: '5', attributes: { created_at: '2026-01-01T00:00:00Z' } } }, update5, 422, [['read_only_attribute', '/data/attributes/created_at']]],
    ['id as an attribute', { data: { type: 'notes', id: '5', attributes: { id: '5' } } }, update5, 422, [['unknown_attribute', '/data/attributes/id']]],
    ['wrong value types', { data: { type: 'notes', id: '5', attributes: { body: 1, pinned: 'yes', rank: 1.5, score: '1', due_at: 'soon', owner_id: 3 } } }, update5, 422, [
      ['invalid_attribute', '/data/attributes/body'],
      ['invalid_attribute', '/data/attributes/pinned'],
      ['invalid_attribute', '/data/attributes/rank'],
      ['invalid_attribute', '/data/attributes/score'],
      ['invalid_attribute', '/data/attributes/due_at'],
      ['invalid_attribute', '/data/attributes/owner_id'],
    ]],
    ['null for a non-nullable attribute', { data: { type: 'notes', id: '5', attributes: { pinned: null } } }, update5, 422, [['invalid_attribute', '/data/attributes/pinned']]],
    ['a NUL character', { data: { type: 'notes', id: '5', attributes: { body: 'a\u0000b' } } }, update5, 422, [['invalid_attribute', '/data/attributes/body']]],
    ['a missing required attribute', { data: { type: 'notes', attributes: {}, relationships: { contact } } }, CREATE, 422, [['missing_attribute', '/data/attributes/body']]],
    ['a blank required attribute', { data: { type: 'notes', attributes: { body: '  ' }, relationships: { contact } } }, CREATE, 422, [['missing_attribute', '/data/attributes/body']]],
    ['a missing required relationship', { data: { type: 'notes', attributes: { body: 'b' } } }, CREATE, 400, [['missing_relationship', '/data/relationships/contact']]],
    ['a required relationship emptied with null', { data: { type: 'notes', attributes: { body: 'b' }, relationships: { contact: { data: null } } } }, CREATE, 400, [['missing_relationship', '/data/relationships/contact']]],
    ['an unknown relationship', { data: { type: 'notes', id: '5', relationships: { author: contact } } }, update5, 422, [['unknown_relationship', '/data/relationships/author']]],
    ['relationships not an object', { data: { type: 'notes', id: '5', relationships: 1 } }, update5, 400, [['invalid_document', '/data/relationships']]],
    ['a relationship without data', { data: { type: 'notes', id: '5', relationships: { contact: {} } } }, update5, 400, [['invalid_document', '/data/relationships/contact']]],
    ['a relationship of the wrong type', { data: { type: 'notes', id: '5', relationships: { contact: { data: { type: 'sites', id: '1' } } } } }, update5, 409, [['type_mismatch', '/data/relationships/contact/data/type']]],
    ['a relationship id that is not an id', { data: { type: 'notes', id: '5', relationships: { contact: { data: { type: 'contacts', id: 7 } } } } }, update5, 422, [['invalid_id', '/data/relationships/contact/data/id']]],
    ['a to-many relationship that is not an array', { data: { type: 'notes', id: '5', relationships: { tags: { data: { type: 'tags', id: '1' } } } } }, update5, 400, [['invalid_document', '/data/relationships/tags/data']]],
    ['several problems of different statuses', { data: { type: 'people', attributes: { colour: 1 }, relationships: { contact } } }, CREATE, 400, [
      ['type_mismatch', '/data/type'],
      ['unknown_attribute', '/data/attributes/colour'],
      ['missing_attribute', '/data/attributes/body'],
    ]],
  ];
  for (const [what, body, mode, status, errors] of REFUSED) {
    it(`refuses ${what}: ${status}`, () => {
      assert.deepEqual(problems(() => readResourceDocument(notes, body, RULES, mode)), { status, errors });
    });
  }

  it('an attribute named __proto__ is unknown and sets no prototype', () => {
    const body = JSON.parse('{"data":{"type":"notes","id":"5","attributes":{"__proto__":{"polluted":true}}}}');
    assert.deepEqual(problems(() => readResourceDocument(notes, body, RULES, update5)), {
      status: 422,
      errors: [['unknown_attribute', '/data/attributes/__proto__']],
    });
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was polluted');
  });

  it('extra attributes are accepted with their declared types', () => {
    const write = readResourceDocument(notes, { data: { type: 'notes', id: '5', attributes: { color: 'red' } } }, { ...RULES, extraAttributes: { color: 'string' } }, update5);
    assert.deepEqual(write.attributes, { color: 'red' });
  });
});

describe('readRelationshipDocument', () => {
  it('reads identifiers, without duplicates', () => {
    assert.deepEqual(readRelationshipDocument({ data: [{ type: 'tags', id: '2' }, { type: 'tags', id: '2' }, { type: 'tags', id: '3' }] }, 'tags'), {
      ids: [2, 3],
      meta: {},
    });
    assert.deepEqual(readRelationshipDocument({ data: [], meta: { a: 1 } }, 'tags'), { ids: [], meta: { a: 1 } });
  });

  it('refuses what is not a list of identifiers of the type', () => {
    assert.deepEqual(problems(() => readRelationshipDocument('x', 'tags')), { status: 400, errors: [['invalid_document', '']] });
    assert.deepEqual(problems(() => readRelationshipDocument({}, 'tags')), { status: 400, errors: [['invalid_document', '']] });
    assert.deepEqual(problems(() => readRelationshipDocument({ data: { type: 'tags', id: '1' } }, 'tags')), { status: 400, errors: [['invalid_document', '/data']] });
    assert.deepEqual(problems(() => readRelationshipDocument({ data: [{ type: 'offers', id: '1' }] }, 'tags')), {
      status: 409,
      errors: [['type_mismatch', '/data/0/type']],
    });
    assert.deepEqual(problems(() => readRelationshipDocument({ data: [{ type: 'tags', id: '1' }, { type: 'tags', id: 'x' }] }, 'tags')), {
      status: 422,
      errors: [['invalid_id', '/data/1/id']],
    });
    assert.deepEqual(problems(() => readRelationshipDocument({ data: [1] }, 'tags')), { status: 400, errors: [['invalid_document', '/data/0']] });
  });
});

describe('throwProblems', () => {
  it('returns when there is nothing to report; one status when all agree, else 400', () => {
    throwProblems([]);
    const p = (status: number) => ({ status, code: 'c', title: 't', detail: 'd', source: { pointer: '' } });
    assert.equal(problems(() => throwProblems([p(422), p(422)])).status, 422);
    assert.equal(problems(() => throwProblems([p(409), p(422)])).status, 400);
    try {
      throwProblems([p(409), p(422)]);
    } catch (error) {
      assert.deepEqual((error as ApiError).errors.map((e) => e.status), ['409', '422'], 'each error keeps its own status');
    }
  });
});
