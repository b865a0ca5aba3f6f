/**
 * The store `maka chaos --store` puts each iteration's children on (docs/decisions.md #84). Chaos
 * never touches a user's store: the kind is taken from `--store`, the place is always the
 * iteration's own scratch data dir (`<iteration>/data/maka.sqlite` for SQLite). The checker sees a
 * SQLite store through its raw rows, read with plain SQL in the files' shape — a header's JSON, a
 * ledger's rows each ended by a newline, a claim's JSON under `<source>@<high-water>.json` — never
 * through the adapter it judges.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { ClaimFile, DataDirSnapshot, RunFiles } from '@maka/chaos'
import { BadInputError } from '../ExitCode.js'
import type { StoreSpec } from '../storeChoice.js'

/**
 * How the children of one chaos run reach their store, and how the checker reads it.
 * @category models
 */
export interface ChaosStore {
  readonly kind: 'jsonl' | 'sqlite'
  /** The CLI arguments that put a child on the iteration's store. */
  readonly argsFor: (dataDir: string) => ReadonlyArray<string>
  /** `--store` for an in-process runtime over the iteration's store, or null for `--data-dir`. */
  readonly storeOf: (dataDir: string) => string | null
  readonly snapshot?: (dataDir: string) => Promise<DataDirSnapshot>
}

const SQLITE_FILE = 'maka.sqlite'

const readSqliteSnapshot = async (dataDir: string): Promise<DataDirSnapshot> => {
  const file = join(dataDir, SQLITE_FILE)
  if (!existsSync(file)) return { runs: new Map(), claims: new Map() }
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(file, { readonly: true, timeout: 30_000 })
  try {
    const runs = new Map<string, RunFiles>()
    const headers = db.prepare('SELECT session_id AS s, run_id AS r, header FROM runs ORDER BY s, r').all() as Array<{
      readonly s: string
      readonly r: string
      readonly header: string
    }>
    const rowsOf = db.prepare('SELECT row FROM events WHERE session_id = ? AND run_id = ? ORDER BY seq').pluck()
    for (const { s, r, header } of headers) {
      const rows = rowsOf.all(s, r) as Array<string>
      runs.set(`${s}/${r}`, {
        sessionId: s,
        runId: r,
        header: Buffer.from(header, 'utf8'),
        ledger: rows.length === 0 ? null : Buffer.from(rows.map((row) => `${row}\n`).join(''), 'utf8'),
      })
    }
    const claims = new Map<string, ClaimFile>()
    const claimRows = db
      .prepare('SELECT session_id AS s, source_run_id AS r, high_water AS hw, record FROM claims ORDER BY s, r, hw')
      .all() as Array<{ readonly s: string; readonly r: string; readonly hw: number; readonly record: string }>
    for (const { s, r, hw, record } of claimRows) {
      const name = `${r}@${hw}.json`
      claims.set(`${s}/${name}`, { sessionId: s, name, bytes: Buffer.from(record, 'utf8') })
    }
    return { runs, claims }
  } finally {
    db.close()
  }
}

/**
 * The chaos store for a `--store` choice (null: the JSONL files of each iteration's data dir).
 * @category constructors
 */
export const chaosStoreFor = (spec: StoreSpec | null): ChaosStore => {
  if (spec === null || spec.kind === 'jsonl') {
    return { kind: 'jsonl', argsFor: (dataDir) => ['--data-dir', dataDir], storeOf: () => null }
  }
  if (spec.kind === 'sqlite') {
    const storeOf = (dataDir: string) => `sqlite:${join(dataDir, SQLITE_FILE)}`
    return {
      kind: 'sqlite',
      argsFor: (dataDir) => ['--data-dir', dataDir, '--store', storeOf(dataDir)],
      storeOf,
      snapshot: readSqliteSnapshot,
    }
  }
  throw new BadInputError('maka chaos --store postgres://… is not available in this build: use jsonl: or sqlite:.')
}
