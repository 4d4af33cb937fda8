// GET /v1/hooks(/{id}): webhook subscriptions of a site. Read with view:hooks.
import { after, before, describe } from 'node:test';
import { hooks } from '../../src/resources/hooks.js';
import { DIALECTS } from '../support/harness.js';
import { at, createWorld, readResourceTests, selfUrl, withoutSeedOnlyAttributes, type World } from '../support/catalogue-fixtures.js';

for (const dialect of DIALECTS) {
  describe(`hooks [${dialect}]`, () => {
    let w: World;
    const h = { h1: '', h2: '', h3: '', h4: '', second: '', foreign: '' };

    before(async () => {
      w = await createWorld(dialect);
      const { rows, siteId } = w;
      h.h1 = await rows.hook(siteId, { event: 'purchase', target_url: 'https://hooks.example.com/purchase', resource_id: null, created_at: at('2026-03-01T10:00:00.000Z') });
      h.h2 = await rows.hook(siteId, { event: 'form_submission', target_url: 'https://hooks.example.com/forms', resource_id: 42, created_at: at('2026-04-01T10:00:00.000Z') });
      // Created at the same moment as h2: the id breaks the tie.
      h.h3 = await rows.hook(siteId, {
        event: 'tag_added',
        target_url: 'https://hooks.example.com/tags',
        resource_id: 7,
        created_at: at('2026-04-01T10:00:00.000Z'),
        updated_at: at('2026-04-15T10:00:00.000Z'),
      });
      h.h4 = await rows.hook(siteId, {
        event: 'purchase',
        target_url: 'https://crm.example.com/in',
        created_at: at('2026-05-01T10:00:00.000Z'),
        disabled_at: at('2026-05-20T10:00:00.000Z'),
      });
      h.second = await rows.hook(w.secondSiteId, { event: 'purchase' });
      h.foreign = await rows.hook(w.other.siteId, { event: 'purchase' });
    });
    after(() => w.t.close());

    readResourceTests({
      resource: hooks,
      world: () => w,
      fixtures: () => h,
      // disabled_at and failing_since are sitebiz's own (docs/upstream-divergences.md).
      upstream: { list: '/v1/hooks', show: '/v1/hooks/{id}', adjust: withoutSeedOnlyAttributes({ hooks: ['disabled_at', 'failing_since'] }) },
      all: () => [h.h4, h.h3, h.h2, h.h1],
      sorts: { created_at: () => [h.h1, h.h2, h.h3, h.h4] },
      filters: [
        { name: 'site_id', query: () => `filter[site_id]=${w.secondSiteId}`, expect: () => [h.second] },
        { name: 'event_eq', query: () => 'filter[event_eq]=purchase', expect: () => [h.h1, h.h4] },
        { name: 'event_in', query: () => 'filter[event_in]=tag_added,form_submission', expect: () => [h.h2, h.h3] },
        { name: 'disabled_at_null', query: () => 'filter[disabled_at_null]=false', expect: () => [h.h4] },
      ],
      // Upstream requires event and target_url, so a fieldset it validates keeps them.
      sparse: ['event', 'target_url'],
      show: () => ({
        id: h.h3,
        type: 'hooks',
        attributes: {
          event: 'tag_added',
          target_url: 'https://hooks.example.com/tags',
          resource_id: 7,
          created_at: '2026-04-01T10:00:00.000Z',
          updated_at: '2026-04-15T10:00:00.000Z',
          disabled_at: null,
          failing_since: null,
        },
        relationships: {
          site: { data: { type: 'sites', id: w.siteId } },
          deliveries: { links: { self: `${selfUrl('hooks', h.h3)}/relationships/deliveries`, related: `${selfUrl('hooks', h.h3)}/deliveries` } },
        },
        links: { self: selfUrl('hooks', h.h3) },
      }),
      foreign: () => h.foreign,
    });
  });
}
