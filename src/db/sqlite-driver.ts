// The better-sqlite3 that works on the running Node. No single version covers both Node lines
// sitebiz supports:
// - better-sqlite3 12 is compiled against each Node's own ABI. On Node 24.19 and later a statement
//   that is garbage-collected aborts the process ("Assertion failed: (env) != nullptr" in
//   RemoveEnvironmentCleanupHook, nodejs/node#65446): a server dies within seconds of serving.
// - better-sqlite3 13 (Node-API, with prebuilt binaries) fixes that but needs Node 22 or later;
//   on Node 20 it crashes on load.
// So package.json installs both (13 under the alias better-sqlite3-napi) and this file loads
// the one for this Node. Their JavaScript API is the same; the types are 12's.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

/** The first Node major on which the Node-API build (better-sqlite3 13) is loaded. */
const NODE_API_BUILD_FROM_MAJOR = 22;

const nodeMajor = Number(process.versions.node.split('.')[0]);

/** Which package this process loads (by the running Node's major version). */
export const SQLITE_DRIVER_PACKAGE = nodeMajor >= NODE_API_BUILD_FROM_MAJOR ? 'better-sqlite3-napi' : 'better-sqlite3';

/** The better-sqlite3 Database constructor for this Node. */
export const SQLiteDatabase: typeof BetterSqlite3 = require(SQLITE_DRIVER_PACKAGE) as typeof BetterSqlite3;

export type SqliteConnection = BetterSqlite3.Database;
export type SqliteStatement = BetterSqlite3.Statement;
