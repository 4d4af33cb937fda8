// The registry's start-up checks that keep request names honest: declaration maps without a
// prototype, so `toString` or `__proto__` in a request finds nothing that was not declared.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from '../../src/jsonapi/registry.js';
import { attr, defineResource } from '../../src/jsonapi/resource.js';

const notes = defineResource({
  type: 'notes',
  table: 'notes',
  description: 'Notes.',
  readPermission: null,
  tenancy: { kind: 'site', column: 'site_id' },
  attributes: { body: attr.string({ sort: true }) },
});

describe('Registry', () => {
  it('finds no inherited name in a declared resource', () => {
    const registry = new Registry([notes]);
    for (const name of ['toString', '__proto__', 'constructor', 'valueOf', 'hasOwnProperty']) {
      assert.equal(registry.isSortable(notes, name), false, name);
      for (const map of [notes.attributes, notes.relationships, notes.filters, notes.sorts, notes.includeNarrowing, notes.actions]) {
        assert.equal(map[name], undefined, name);
        assert.equal(name in map, false, name);
      }
      assert.equal(registry.find(name), undefined, name);
    }
    assert.equal(registry.isSortable(notes, 'body'), true);
  });

  it('refuses at start-up a resource whose maps inherit from Object.prototype', () => {
    const handMade = { ...notes, filters: {} };
    assert.throws(() => new Registry([handMade]), /resource notes: declare it with defineResource/);
  });
});
