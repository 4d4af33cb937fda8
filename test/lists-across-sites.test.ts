// The upstream's GET /v1/blog_posts, /v1/hooks, /v1/landing_pages and /v1/website_pages take no
// filter[site_id], so a client written to the upstream (and `sitebiz import`) lists them without
// one. Declared `siteFilter: 'optional'`, they span every site the key reaches: the same records,
// in the same order and with the same counts as the sites' lists put together, on every kind of
// page; and each site is read as its own index range (the page never sorts every record of every
// site), so the cost stays what the scale work made it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { createSite, createUser } from '../src/domain/accounts.js';
import { builders } from './support/builders.js';
import { createTestApp, DIALECTS, PUBLIC_URL, type TestApp } from './support/harness.js';

const SITES = 3;
const PER_SITE = 7;

interface Listed {
  data: Array<{ id: string; attributes: Record<string, unknown>; relationships?: Record<string, { data?: { id: string } }> }>;
  links: { next: string | null };
  meta: { total_count: number };
}

for (const dialect of DIALECTS) {
  describe(`lists the upstream does not scope by site span every site [${dialect}]`, () => {
    let t: TestApp;
    let token: string;
    const siteIds: number[] = [];
    /** type → id → its site, for every record this file made. */
    const siteOf = new Map<string, Map<string, number>>();

    before(async () => {
      t = await createTestApp(dialect);
      token = await t.token();
      siteIds.push(t.tenant.siteId);
      for (let i = 1; i < SITES; i++) {
        siteIds.push(await createSite(t.handle, { accountId: t.tenant.accountId, title: `Site ${i}`, subdomain: `across-${i}-${dialect}` }, t.clock));
      }
      const remember = (type: string, id: number, siteId: number) => {
        if (!siteOf.has(type)) siteOf.set(type, new Map());
        siteOf.get(type)!.set(String(id), siteId);
      };
      // Interleaved in time across the sites, with equal titles and equal times across sites, so
      // the merge's order (sort key, then id) is what decides.
      for (let n = 0; n < PER_SITE; n++) {
        for (const siteId of siteIds) {
          const b = builders(t, siteId);
          if (n % 3 !== 2) t.clock.advance(60);
          const title = n % 2 === 0 ? 'Same title' : `Title ${n}`;
          remember('landing_pages', await b.landingPage({ title, publish_at: n === 3 ? null : undefined }), siteId);
          remember('website_pages', await b.websitePage({ title }), siteId);
          const blog = await b.blog();
          remember('blog_posts', await b.blogPost({ blogId: blog, title }), siteId);
          const hook = await t.request({
            method: 'POST',
            url: '/v1/hooks',
            token,
            payload: {
              data: {
                type: 'hooks',
                attributes: { event: n % 2 === 0 ? 'tag_added' : 'purchase', target_url: `http://localhost:4000/hooks/${siteId}/${n}` },
                relationships: { site: { data: { type: 'sites', id: String(siteId) } } },
              },
            },
          });
          assert.equal(hook.statusCode, 201, hook.body);
          remember('hooks', Number(hook.json().data.id), siteId);
        }
      }
    });
    after(() => t.close());

    const list = async (path: string): Promise<Listed> => {
      const res = await t.request({ method: 'GET', url: path, token });
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      return res.json();
    };
    /** Every id of a list, page by page (numbered pages of `size`), following links.next. */
    const walk = async (path: string, size: number): Promise<string[]> => {
      const ids: string[] = [];
      let next: string | null = `${path}${path.includes('?') ? '&' : '?'}page[size]=${size}`;
      while (next) {
        const page: Listed = await list(next.startsWith(PUBLIC_URL) ? next.slice(PUBLIC_URL.length) : next);
        ids.push(...page.data.map((r) => r.id));
        next = page.links.next;
      }
      return ids;
    };
    /** The reference order: every record read with page[size]=100 from each site's own list, then sorted here. */
    const expected = async (type: string, sort: string, where = ''): Promise<string[]> => {
      const rows: Array<{ id: string; key: unknown }> = [];
      const [name, descending] = sort.startsWith('-') ? [sort.slice(1), true] : [sort, false];
      for (const siteId of siteIds) {
        const page = await list(`/v1/${type}?filter[site_id]=${siteId}&page[size]=100&sort=${sort}${where}`);
        rows.push(...page.data.map((r) => ({ id: r.id, key: name === 'id' ? null : r.attributes[name] })));
      }
      const compare = (a: unknown, b: unknown): number => (a === b ? 0 : a === null ? 1 : b === null ? -1 : String(a) < String(b) ? -1 : 1);
      rows.sort((a, b) => {
        const byKey = compare(a.key, b.key) || Number(a.id) - Number(b.id);
        return descending ? -byKey : byKey;
      });
      return rows.map((r) => r.id);
    };

    const cases: Array<{ type: string; sorts: string[] }> = [
      { type: 'landing_pages', sorts: ['title', '-created_at', 'publish_at', '-publish_at'] },
      { type: 'website_pages', sorts: ['-created_at', 'title'] },
      { type: 'blog_posts', sorts: ['-published_at', 'title'] },
      { type: 'hooks', sorts: ['-id', 'created_at'] },
    ];

    for (const { type, sorts } of cases) {
      it(`GET /v1/${type} without filter[site_id] lists every site's records, each naming its site`, async () => {
        const made = siteOf.get(type)!;
        const page = await list(`/v1/${type}?page[size]=100`);
        assert.equal(page.meta.total_count, SITES * PER_SITE);
        assert.deepEqual(new Set(page.data.map((r) => r.id)), new Set(made.keys()));
        for (const record of page.data) {
          assert.equal(record.relationships?.site?.data?.id, String(made.get(record.id)), `${type} ${record.id}`);
        }
        // filter[site_id] still narrows to one site.
        const one = await list(`/v1/${type}?filter[site_id]=${siteIds[1]}&page[size]=100`);
        assert.deepEqual(one.data.map((r) => made.get(r.id)), Array(PER_SITE).fill(siteIds[1]));
      });

      for (const sort of sorts) {
        it(`GET /v1/${type}?sort=${sort} pages across sites in one order: numbered pages, deep pages and cursors agree`, async () => {
          const reference = await expected(type, sort);
          assert.equal(reference.length, SITES * PER_SITE);
          assert.deepEqual(await walk(`/v1/${type}?sort=${sort}`, 4), reference, 'numbered pages of 4');
          // Page 5 straight away (no boundary remembered yet: it skips), then again (from the boundary).
          for (const attempt of ['skipping', 'from a remembered boundary']) {
            const deep = await list(`/v1/${type}?sort=${sort}&page[size]=3&page[number]=5`);
            assert.deepEqual(deep.data.map((r) => r.id), reference.slice(12, 15), attempt);
          }
          const cursorIds: string[] = [];
          let next: string | null = `/v1/${type}?sort=${sort}&page[size]=5&page[after]=`;
          while (next) {
            const page: Listed = await list(next.startsWith(PUBLIC_URL) ? next.slice(PUBLIC_URL.length) : next);
            cursorIds.push(...page.data.map((r) => r.id));
            next = page.links.next;
          }
          assert.deepEqual(cursorIds, reference, 'cursor pages of 5');
        });
      }
    }

    it('filters apply across sites, counted exactly', async () => {
      const reference = await expected('landing_pages', 'title', '&filter[title_eq]=Same title');
      const page = await list('/v1/landing_pages?filter[title_eq]=Same title&page[size]=2');
      assert.equal(page.meta.total_count, reference.length);
      assert.deepEqual(await walk('/v1/landing_pages?filter[title_eq]=Same title', 2), reference);
      const drafts = await list('/v1/landing_pages?filter[published]=false&page[size]=100');
      assert.equal(drafts.data.length, SITES, 'one never-published page per site');
    });

    it('a key reaching one site of the account lists that site only', async () => {
      const userId = await createUser(t.handle, {
        accountId: t.tenant.accountId,
        name: 'One Site',
        email: `one-${dialect}@example.test`,
        role: 'assistant',
        siteIds: [siteIds[2]!],
      });
      const key = await t.keyWith(userId, ['view:pages', 'view:hooks']);
      const res = await t.request({ method: 'GET', url: '/v1/landing_pages?page[size]=100', token: key.token });
      assert.equal(res.statusCode, 200, res.body);
      const made = siteOf.get('landing_pages')!;
      assert.deepEqual(new Set(res.json().data.map((r: { id: string }) => made.get(r.id))), new Set([siteIds[2]]));
    });

    it('reads each site as an index range and merges the page (no sort of every site’s records)', async () => {
      const { result, statements } = await t.queries.during(() => t.get('/v1/landing_pages?sort=-created_at&page[size]=5&page[number]=2', token));
      assert.equal(result.statusCode, 200, result.body);
      const page = statements.find((s) => / union all /.test(s));
      assert.ok(page, `no merged page query among:\n${statements.join('\n')}`);
      // Parameters: each branch's site, then limits; any site id and small numbers plan alike.
      const parameters = (page.match(/\?|\$\d+/g) ?? []).map(() => siteIds[0]);
      if (dialect === 'sqlite') {
        const plan = await t.handle.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${page}`, parameters));
        const text = plan.rows.map((r) => r.detail).join('\n');
        assert.equal((text.match(/SEARCH landing_pages USING (COVERING )?INDEX/g) ?? []).length, SITES, text);
        assert.doesNotMatch(text, /SCAN landing_pages/, text);
      } else {
        const text = await t.handle.db.transaction().execute(async (trx) => {
          await sql`set local enable_seqscan = off`.execute(trx);
          const plan = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${page}`, parameters));
          return plan.rows.map((r) => r['QUERY PLAN']).join('\n');
        });
        assert.doesNotMatch(text, /Seq Scan/, text);
        // Each site's branch is an index scan under its own Limit, not a sort of all its rows.
        assert.ok((text.match(/Index (Only )?Scan[^\n]*landing_pages/g) ?? []).length >= SITES, text);
        assert.ok((text.match(/->\s+Limit/g) ?? []).length >= SITES, text);
      }
    });
  });
}
