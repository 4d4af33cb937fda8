// The sandbox's records about sites (docs/permissions.md, "The sandbox and sites"): request
// journal entries name the sites their request reached, faults the sites they are limited to.
// Both keep them as text, ",1,2," (every id between commas, ascending; "" for none), with how
// many, so that one condition decides what a user limited to some sites may see: a record about
// sites when each of them is one of its sites, a record about no site when its own user made it.
// The owner, and a user given every site of the account, see every record.
import { sql } from 'kysely';
import { reachesEverySite } from '../auth/roles.js';
import type { AnyEB, Condition, TenantViewer } from '../jsonapi/resource.js';

/** The columns of a record about these sites. */
export function siteColumns(siteIds: Iterable<number>): { site_ids: string; site_count: number } {
  const ids = [...new Set(siteIds)].sort((a, b) => a - b);
  return { site_ids: ids.length === 0 ? '' : `,${ids.join(',')},`, site_count: ids.length };
}

/** The sites of a site_ids text, ascending. */
export function sitesOf(text: string): number[] {
  return text.split(',').filter((part) => part !== '').map(Number);
}

/**
 * The tenancy's visibleTo of a table of records about sites (columns site_ids, site_count and
 * user_id): undefined (every record of the account) for an owner; otherwise every record when the
 * reader reaches every site of the account, else the records of its sites and its own records
 * about no site.
 */
export function visibleBySites(table: string) {
  return (eb: AnyEB, viewer: TenantViewer): Condition | undefined => {
    if (reachesEverySite(viewer.role)) return undefined;
    const sites = viewer.siteIds;
    const otherSites = eb.selectFrom('sites').select('sites.id').where('sites.account_id', '=', viewer.accountId);
    const wholeAccount = eb.not(eb.exists(sites.length === 0 ? otherSites : otherSites.where('sites.id', 'not in', [...sites])));
    const ownWithoutSite = eb.and([eb(`${table}.site_count`, '=', 0), eb(`${table}.user_id`, '=', viewer.userId)]);
    if (sites.length === 0) return eb.or([wholeAccount, ownWithoutSite]);
    // Each of the record's sites is one of the reader's: as many of the reader's sites are in the
    // list as the list holds.
    const listed = sql.join(
      sites.map((id) => sql`case when ${eb.ref(`${table}.site_ids`)} like ${`%,${id},%`} then 1 else 0 end`),
      sql` + `,
    );
    const withinSites = eb.and([eb(`${table}.site_count`, '>', 0), eb(`${table}.site_count`, '=', sql<number>`${listed}`)]);
    return eb.or([wholeAccount, ownWithoutSite, withinSites]);
  };
}
