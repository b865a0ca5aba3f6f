/**
 * @maka/store-postgres — the maka-resume store ports over one PostgreSQL database that several hosts
 * share: a versioned schema, rows holding the same RuntimeEvent and AgentRun JSON as the JSONL files,
 * decoded with the same codecs, the continuation claim as an INSERT against a unique constraint in
 * the same transaction as its target header, and session ownership as a session-scoped advisory lock.
 */
export {
  openPostgresStores,
  currentHostId,
  type PostgresStores,
  type PostgresStoresOptions,
} from './openPostgresStores.js'
export { BadConnectionString, SchemaTooNew } from './database.js'
export { SCHEMA_VERSION } from './schema.js'
