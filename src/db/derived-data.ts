// Data the database derives from the rows themselves: list counters kept by triggers, text
// search indexes. Triggers keep them exact for every ordinary write; a bulk load (`sitebiz seed`)
// switches that upkeep off, writes millions of rows, then rebuilds everything in one pass, which
// is many times faster than maintaining it row by row.
//
// Each kind of derived data registers one maintainer in DERIVED_DATA below.
import type { DatabaseHandle } from './connect.js';

/**
 * What a rebuild makes: `rows` that readers see (counters), or an `index` that only speeds reads
 * up, which a reader of the rows (the seed's snapshot) need not wait for.
 */
export type DerivedDataKind = 'rows' | 'index';

export interface DerivedDataMaintainer {
  name: string;
  kind: DerivedDataKind;
  /** Stops row-by-row upkeep (drops or disables triggers) before a bulk load. */
  suspend(handle: DatabaseHandle): Promise<void>;
  /** Rebuilds the derived data from the rows and turns upkeep back on. */
  rebuild(handle: DatabaseHandle): Promise<void>;
}

export const DERIVED_DATA: DerivedDataMaintainer[] = [];

export async function suspendDerivedData(handle: DatabaseHandle): Promise<void> {
  for (const maintainer of DERIVED_DATA) await maintainer.suspend(handle);
}

/** Rebuilds the derived data of the given kinds (default: all). */
export async function rebuildDerivedData(handle: DatabaseHandle, kinds: readonly DerivedDataKind[] = ['rows', 'index']): Promise<void> {
  for (const maintainer of DERIVED_DATA) if (kinds.includes(maintainer.kind)) await maintainer.rebuild(handle);
}
