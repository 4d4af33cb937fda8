import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidWebsite, normalizePublicWebsite } from '../../src/domain/customer-rules.js';

describe('normalizePublicWebsite', () => {
  const cases: Array<[string | null | undefined, string | null]> = [
    [null, null],
    [undefined, null],
    ['', null],
    ['   ', null],
    ['example.com', 'https://example.com'],
    ['  Example.COM/About  ', 'https://example.com/About'],
    ['http://Example.com:80/', 'http://example.com'],
    ['https://example.com:443/path?q=1', 'https://example.com/path?q=1'],
    ['https://shop.example.co.uk/a/b#top', 'https://shop.example.co.uk/a/b#top'],
    ['http://localhost:3000/me', 'http://localhost:3000/me'],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => {
      assert.equal(normalizePublicWebsite(input), expected);
    });
  }

  for (const bad of ['ftp://example.com', 'javascript:alert(1)', 'not a url', 'https://nodot', 'https://user:pw@example.com', 'mailto:a@b.example']) {
    it(`refuses ${JSON.stringify(bad)}`, () => {
      assert.throws(() => normalizePublicWebsite(bad), InvalidWebsite, `expected ${bad} to be refused`);
    });
  }
});
