// Data the database derives from the rows themselves: list counters kept by triggers, text
// search indexes. Triggers keep them exact for every ordinary write; a bulk load (`sitebiz seed`)
// switches that upkeep off, writes millions of rows, then rebuilds everything in one pass, which
// is many times faster than maintaining it row by row.
//
// Each kind of derived data registers one maintainer in DERIVED_DATA below.
import type { DatabaseHandle } from './connect.js';

export interface DerivedDataMaintainer {
  name: string;
  /** Stops row-by-row upkeep (drops or disables triggers) before a bulk load. */
  suspend(handle: DatabaseHandle): Promise<void>;
  /** Rebuilds the derived data from the rows and turns upkeep back on. */
  rebuild(handle: DatabaseHandle): Promise<void>;
}

export const DERIVED_DATA: DerivedDataMaintainer[] = [];

export async function suspendDerivedData(handle: DatabaseHandle): Promise<void> {
  for (const maintainer of DERIVED_DATA) await maintainer.suspend(handle);
}

export async function rebuildDerivedData(handle: DatabaseHandle): Promise<void> {
  for (const maintainer of DERIVED_DATA) await maintainer.rebuild(handle);
}
