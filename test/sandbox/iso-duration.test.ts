// ISO 8601 durations of the account clock (src/domain/iso-duration.ts): what parses, what is
// refused, and how calendar months and years are added.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addIsoDuration, parseIsoDuration, type IsoDuration } from '../../src/domain/iso-duration.js';

const zero: IsoDuration = { years: 0, months: 0, weeks: 0, days: 0, hours: 0, minutes: 0, seconds: 0 };
const parsed = (text: string) => {
  const result = parseIsoDuration(text);
  assert.ok('duration' in result, `${text}: ${'error' in result ? result.error : ''}`);
  return result.duration;
};

describe('ISO 8601 durations', () => {
  it('reads every designator, in order, with decimal seconds', () => {
    assert.deepEqual(parsed('P32D'), { ...zero, days: 32 });
    assert.deepEqual(parsed('P1Y2M3DT4H5M6S'), { years: 1, months: 2, weeks: 0, days: 3, hours: 4, minutes: 5, seconds: 6 });
    assert.deepEqual(parsed('PT10M'), { ...zero, minutes: 10 });
    assert.deepEqual(parsed('P1M'), { ...zero, months: 1 });
    assert.deepEqual(parsed('PT1M'), { ...zero, minutes: 1 });
    assert.deepEqual(parsed('P3W'), { ...zero, weeks: 3 });
    assert.deepEqual(parsed('PT0.5S'), { ...zero, seconds: 0.5 });
    assert.deepEqual(parsed('PT1,25S'), { ...zero, seconds: 1.25 });
    assert.deepEqual(parsed('P0D'), zero, 'well formed; the clock refuses it for not moving');
  });

  it('refuses anything else, saying why', () => {
    for (const text of ['', 'P', 'PT', 'P1DT', '1D', 'p1d', 'P1d', '-P1D', '+P1D', 'P1.5D', 'P1H', 'PT1D', 'P1D1M', 'P1M1Y', 'P1W1D', 'P1DP1D', 'PT1.2345S', ' P1D', 'P1D ', 'P١D', 'P123456789D']) {
      const result = parseIsoDuration(text);
      assert.ok('error' in result, `${JSON.stringify(text)} is refused`);
    }
    const mixed = parseIsoDuration('P1W1D');
    assert.ok('error' in mixed && /weeks/.test(mixed.error));
  });

  it('adds months and years on the UTC calendar, keeping the day or taking the month\'s last', () => {
    const at = (iso: string, text: string) => addIsoDuration(new Date(iso), parsed(text)).toISOString();
    assert.equal(at('2026-01-31T10:00:00.000Z', 'P1M'), '2026-02-28T10:00:00.000Z');
    assert.equal(at('2028-01-31T10:00:00.000Z', 'P1M'), '2028-02-29T10:00:00.000Z', 'a leap year');
    assert.equal(at('2026-03-15T10:00:00.000Z', 'P1M'), '2026-04-15T10:00:00.000Z');
    assert.equal(at('2028-02-29T00:00:00.000Z', 'P1Y'), '2029-02-28T00:00:00.000Z');
    assert.equal(at('2026-11-30T23:59:59.999Z', 'P3M'), '2027-02-28T23:59:59.999Z');
    assert.equal(at('2026-01-01T00:00:00.000Z', 'P1Y13M'), '2028-02-01T00:00:00.000Z', 'months past 12 carry into years');
    // Then the exact units, a day being 24 hours.
    assert.equal(at('2026-01-31T10:00:00.000Z', 'P1M1DT1H0.5S'), '2026-03-01T11:00:00.500Z');
    assert.equal(at('2026-06-01T12:00:00.000Z', 'P32D'), '2026-07-03T12:00:00.000Z');
    assert.equal(at('2026-06-01T12:00:00.000Z', 'P2W'), '2026-06-15T12:00:00.000Z');
  });
});
