// Generates one site's people, batch by batch: the demo's plans and rows (src/demo), drawn from
// the site's own seed, with each email reaching only part of its audience (SEED_EMAIL_AUDIENCE).
// Runs in a worker thread (generator-worker.ts) while the main thread writes the previous batch.
import { traitsFor, type DialectName } from '../db/dialect-traits.js';
import { buildCatalogue, type Catalogue } from '../demo/catalogue.js';
import type { EmailAudience } from '../demo/email-activity.js';
import { PeoplePlanner } from '../demo/people.js';
import { addPerson, PEOPLE_TABLES } from '../demo/person-rows.js';
import { Rng, seedOf } from '../demo/random.js';
import { RowSet, type TableName } from '../demo/rows.js';
import { planContext } from '../demo/seed.js';
import { Timeline } from '../demo/timeline.js';
import { encodeBatch, type EncodedBatch } from './people-batch.js';

/**
 * Chances that a broadcast or a sequence email reaches a person. Real businesses send most
 * broadcasts to a segment; here about 4 email events per contact (the demo sends everything to
 * everyone: about 25), and every email filter still matches some contacts and not others.
 */
export const SEED_EMAIL_AUDIENCE: EmailAudience = { broadcastShare: 0.12, sequenceShare: 0.25 };

/** Everything a generator needs; plain data, so it can be handed to a worker thread. */
export interface SiteJob {
  dialect: DialectName;
  siteId: number;
  subdomain: string;
  /** The site's seed: derived from `--seed` and the site's position. */
  siteSeed: number;
  /** The clock's now, in ms: every timestamp is relative to it. */
  nowMs: number;
  contacts: number;
  batchSize: number;
  /** Ids of the catalogue rows as written, per table, in the order buildCatalogue makes them. */
  catalogueIds: Partial<Record<TableName, number[]>>;
}

/** The site's catalogue as rows: the same on the writer's side and in the generator. */
export function siteCatalogue(job: Pick<SiteJob, 'siteId' | 'subdomain' | 'siteSeed' | 'nowMs'>, set: RowSet): Catalogue {
  return buildCatalogue(set, { id: job.siteId, subdomain: job.subdomain }, new Timeline(new Date(job.nowMs)), new Rng(seedOf(job.siteSeed, 'catalogue')));
}

export class PeopleGenerator {
  private readonly set = new RowSet();
  private readonly planner: PeoplePlanner;
  private readonly ctx;
  private next = 0;

  constructor(private readonly job: SiteJob) {
    const t = new Timeline(new Date(job.nowMs));
    // Rebuild the catalogue the writer wrote (same seed, same clock) and give its rows their ids.
    const catalogueRows = new RowSet();
    const catalogue = siteCatalogue(job, catalogueRows);
    for (const table of catalogueRows.tables()) {
      const ids = job.catalogueIds[table];
      const rows = catalogueRows.rows(table);
      if (!ids) continue;
      if (ids.length !== rows.length) throw new Error(`seed: the catalogue's ${table} differs from the one written`);
      rows.forEach((row, i) => {
        row.id = ids[i];
      });
    }
    this.planner = new PeoplePlanner(job.contacts, planContext(catalogue, t), job.siteSeed);
    this.ctx = { set: this.set, catalogue, t, orderNumbers: { next: 1001 }, emailAudience: SEED_EMAIL_AUDIENCE };
  }

  /** The next batch of people, or null when the site is complete. */
  nextBatch(): { batch: EncodedBatch; contacts: number } | null {
    if (this.next >= this.job.contacts) return null;
    const start = this.next;
    const end = Math.min(this.job.contacts, start + this.job.batchSize);
    this.set.clear();
    for (let i = start; i < end; i++) addPerson(this.ctx, this.planner.plan(i), new Rng(seedOf(this.job.siteSeed, 'rows', i)));
    this.next = end;
    return { batch: encodeBatch(this.set, PEOPLE_TABLES, traitsFor(this.job.dialect)), contacts: end - start };
  }
}
