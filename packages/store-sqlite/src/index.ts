/**
 * @maka/store-sqlite — the maka-resume store ports over one SQLite database per data dir: WAL with
 * `synchronous=FULL`, a versioned schema, rows holding the same RuntimeEvent and AgentRun JSON as
 * the JSONL files, decoded with the same codecs, and the continuation claim as a UNIQUE key written
 * in the same transaction as its target header.
 */
export { openSqliteStores, type SqliteStores, type SqliteStoresOptions } from './openSqliteStores.js'
export { SCHEMA_VERSION } from './schema.js'
