/**
 * Whether a PostgreSQL server makes an acknowledged commit durable (docs/decisions.md #152): the tool
 * journal proves "never dispatched" from "no dispatch row", which holds only if a dispatch row the
 * server acknowledged cannot be lost. With `synchronous_commit = off` the server acknowledges before
 * its WAL is flushed, and with `fsync = off` a flush reaches no stable storage: a crash of the server
 * or the machine could then lose an acknowledged row.
 */
import type pg from 'pg'

/**
 * The two settings the rule reads, as `SHOW` prints them.
 * @category models
 */
export interface CommitSettings {
  readonly synchronousCommit: string
  readonly fsync: string
}

// Every level that waits for the local WAL flush before acknowledging (`off` is the one that does
// not). A value this list does not know, from a newer server, counts as not durable: fail closed.
const FLUSHED_LOCALLY: ReadonlySet<string> = new Set(['on', 'local', 'remote_write', 'remote_apply'])

/**
 * True when a commit is acknowledged only after its WAL is flushed to stable storage: `fsync` is
 * exactly `on` and `synchronous_commit` is one of `on`, `local`, `remote_write`, `remote_apply`.
 * @category guards
 */
export const isDurableCommit = (settings: CommitSettings): boolean =>
  settings.fsync === 'on' && FLUSHED_LOCALLY.has(settings.synchronousCommit)

const show = async (pool: pg.Pool, setting: 'synchronous_commit' | 'fsync'): Promise<string> => {
  const row = (await pool.query(`SHOW ${setting}`)).rows[0] as Record<string, unknown> | undefined
  const shown = row?.[setting]
  return typeof shown === 'string' ? shown : ''
}

/**
 * Reads the settings a pooled connection has: the server's `fsync`, and `synchronous_commit` as
 * this database, role and connection string leave it for every connection of the pool.
 * @category constructors
 */
export const readCommitSettings = async (pool: pg.Pool): Promise<CommitSettings> => ({
  synchronousCommit: await show(pool, 'synchronous_commit'),
  fsync: await show(pool, 'fsync'),
})
