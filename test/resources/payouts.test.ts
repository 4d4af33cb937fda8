// GET /v1/kajabi_payments_payouts(/{id}): transfers to the site owner's bank. filter[site_id] is
// required on the list even for a user who reaches a single site. Read with view:payouts.
//
// Upstream documents both 200 responses without a body schema (only prose and an example), so
// they cannot be validated against it; the exact resource objects below follow its example's
// attribute names (status, amount, currency, initiated_date, estimated_arrival_date, bank_account).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createUser } from '../../src/domain/accounts.js';
import { kajabiPaymentsPayouts } from '../../src/resources/payouts.js';
import { assertResponseMatchesUpstream } from '../support/upstream.js';
import { DIALECTS } from '../support/harness.js';
import { at, createWorld, getJson, idsOf, readResourceTests, selfUrl, type World } from '../support/catalogue-fixtures.js';

for (const dialect of DIALECTS) {
  describe(`kajabi_payments_payouts [${dialect}]`, () => {
    let w: World;
    const py = { py1: '', py2: '', py3: '', py4: '', py5: '', second: '', foreign: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      const payout = (status: string, cents: number, initiated: string, arrival: string, destination = 'Chase Bank - 1234') =>
        rows.payout(siteId, {
          status,
          amount_in_cents: cents,
          currency: 'USD',
          initiated_at: at(initiated),
          estimated_arrival_at: at(arrival),
          destination,
        });
      py.py1 = await payout('paid', 150000, '2026-05-01T10:00:00.000Z', '2026-05-03T10:00:00.000Z');
      py.py2 = await payout('in_transit', 50050, '2026-05-10T10:00:00.000Z', '2026-05-12T10:00:00.000Z', 'Wells Fargo - 9876');
      // Initiated at the same moment as py2: the id breaks the tie.
      py.py3 = await payout('failed', 2000, '2026-05-10T10:00:00.000Z', '2026-05-11T10:00:00.000Z');
      // The last moment of May 31, and the first of June 1.
      py.py4 = await payout('pending', 99, '2026-05-31T23:59:59.999Z', '2026-06-02T10:00:00.000Z');
      py.py5 = await payout('paid', 300000, '2026-06-01T00:00:00.000Z', '2026-06-03T10:00:00.000Z');
      py.second = await rows.payout(w.secondSiteId);
      py.foreign = await rows.payout(w.other.siteId);
    });
    after(() => w.t.close());

    readResourceTests({
      resource: kajabiPaymentsPayouts,
      world: () => w,
      fixtures: () => py,
      upstream: null,
      all: () => [py.py5, py.py4, py.py3, py.py2, py.py1],
      sorts: {
        initiated_date: () => [py.py1, py.py2, py.py3, py.py4, py.py5],
        estimated_arrival_date: () => [py.py1, py.py3, py.py2, py.py4, py.py5],
      },
      filters: [
        { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [py.second] },
        { name: 'status', query: () => 'filter[status]=paid', expect: () => [py.py1, py.py5] },
        // The status as rendered, in any case: "In transit".
        { name: 'status', query: () => 'filter[status]=In%20Transit', expect: () => [py.py2] },
        { name: 'start_date', query: () => 'filter[start_date]=2026-05-10', expect: () => [py.py2, py.py3, py.py4, py.py5] },
        // A date alone as end_date includes that whole day.
        { name: 'end_date', query: () => 'filter[end_date]=2026-05-31', expect: () => [py.py1, py.py2, py.py3, py.py4] },
      ],
      sparse: ['status', 'amount'],
      show: () => ({
        id: py.py2,
        type: 'kajabi_payments_payouts',
        attributes: {
          status: 'In transit',
          amount: 500.5,
          currency: 'USD',
          initiated_date: '2026-05-10T10:00:00.000Z',
          estimated_arrival_date: '2026-05-12T10:00:00.000Z',
          bank_account: 'Wells Fargo - 9876',
        },
        links: { self: selfUrl('kajabi_payments_payouts', py.py2) },
      }),
      foreign: () => py.foreign,
    });

    it('requires filter[site_id] even when the user reaches one site (400), unlike other lists', async () => {
      const assistant = await createUser(
        w.t.handle,
        { accountId: w.t.tenant.accountId, name: 'Sam Single', email: 'sam@example.com', role: 'assistant', siteIds: [Number(w.siteId)] },
        w.t.clock,
      );
      const { token } = await w.t.keyWith(assistant, ['view:payouts', 'view:hooks']);
      const res = await getJson(w, '/v1/kajabi_payments_payouts', 400, token);
      const error = res.json().errors[0];
      assert.equal(error.code, 'invalid_parameter');
      assert.deepEqual(error.source, { parameter: 'filter[site_id]' });
      // Other lists take the user's one site without it.
      await getJson(w, '/v1/hooks', 200, token);
      assert.deepEqual(idsOf(await getJson(w, `/v1/kajabi_payments_payouts?filter[site_id]=${w.siteId}`, 200, token)), [py.py5, py.py4, py.py3, py.py2, py.py1]);
      // The site the assistant was not given is not there for them.
      await getJson(w, `/v1/kajabi_payments_payouts?filter[site_id]=${w.secondSiteId}`, 404, token);
    });

    it('answers 403 as upstream documents it', async () => {
      const { token } = await w.t.keyWith(w.t.tenant.ownerId, ['view:hooks']);
      const listed = await getJson(w, `/v1/kajabi_payments_payouts?filter[site_id]=${w.siteId}`, 403, token);
      assertResponseMatchesUpstream('GET', '/v1/kajabi_payments_payouts', listed);
      const shown = await getJson(w, `/v1/kajabi_payments_payouts/${py.py1}`, 403, token);
      assertResponseMatchesUpstream('GET', '/v1/kajabi_payments_payouts/{id}', shown);
      const missing = await getJson(w, `/v1/kajabi_payments_payouts/${py.foreign}`, 404);
      assertResponseMatchesUpstream('GET', '/v1/kajabi_payments_payouts/{id}', missing);
    });

    it('shows a payout with the filter[site_id] upstream requires on the show', async () => {
      const res = await getJson(w, `/v1/kajabi_payments_payouts/${py.py1}?filter[site_id]=${w.siteId}`);
      assert.equal(res.json().data.id, py.py1);
    });
  });
}
