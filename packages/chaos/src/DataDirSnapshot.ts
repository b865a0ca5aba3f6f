/**
 * The raw bytes of a data directory, as the invariant checker sees them: every run's `run.json` and
 * `runtime-events.jsonl`, every claim file. It reads the files directly, not through `@maka/stores`:
 * the checker is the oracle of the product, so it must not share the code it judges. Reading never
 * writes, and a file that is missing is recorded as missing, never as an error.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One run folder's files.
 * @category models
 */
export interface RunFiles {
  readonly sessionId: string
  readonly runId: string
  /** `run.json`, or null when it does not exist. */
  readonly header: Buffer | null
  /** `runtime-events.jsonl`, or null when it does not exist. */
  readonly ledger: Buffer | null
}

/**
 * One claim file.
 * @category models
 */
export interface ClaimFile {
  readonly sessionId: string
  /** The file name, `<sourceRunId>@<highWater>.json`. */
  readonly name: string
  readonly bytes: Buffer
}

/**
 * Every run and claim of a data directory, keyed `<sessionId>/<runId>` and `<sessionId>/<name>`.
 * @category models
 */
export interface DataDirSnapshot {
  readonly runs: ReadonlyMap<string, RunFiles>
  readonly claims: ReadonlyMap<string, ClaimFile>
  /**
   * Each session's `owner.lock` as raw bytes, keyed by session id (absent: no lock). The driver only
   * reads it to tell whether a storm began over a dead owner's lock; no invariant judges it, since a
   * lock is the product's to take over. Optional: a host's snapshot may not know where its store keeps it.
   */
  readonly owners?: ReadonlyMap<string, Buffer>
}

/**
 * How often each side-effect token was observed in a workspace.
 * @category models
 */
export type EffectCounts = ReadonlyMap<string, number>

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A snapshot with nothing in it (the state before the first child ran).
 * @category constructors
 */
export const emptySnapshot: DataDirSnapshot = { runs: new Map(), claims: new Map() }

const listNames = async (dir: string): Promise<ReadonlyArray<string>> => {
  try {
    return (await readdir(dir)).sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

const readOrNull = async (path: string): Promise<Buffer | null> => {
  try {
    return await readFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

/**
 * Reads every run, claim and owner lock under `<dataDir>/sessions`.
 * @category constructors
 */
export const readDataDir = async (dataDir: string): Promise<DataDirSnapshot> => {
  const runs = new Map<string, RunFiles>()
  const claims = new Map<string, ClaimFile>()
  const owners = new Map<string, Buffer>()
  const sessionsDir = join(dataDir, 'sessions')
  for (const sessionId of await listNames(sessionsDir)) {
    const lock = await readOrNull(join(sessionsDir, sessionId, 'owner.lock'))
    if (lock !== null) owners.set(sessionId, lock)
    const runsDir = join(sessionsDir, sessionId, 'runs')
    for (const runId of await listNames(runsDir)) {
      const dir = join(runsDir, runId)
      runs.set(`${sessionId}/${runId}`, {
        sessionId,
        runId,
        header: await readOrNull(join(dir, 'run.json')),
        ledger: await readOrNull(join(dir, 'runtime-events.jsonl')),
      })
    }
    const claimsDir = join(sessionsDir, sessionId, 'claims')
    for (const name of await listNames(claimsDir)) {
      if (!name.endsWith('.json')) continue
      const bytes = await readOrNull(join(claimsDir, name))
      if (bytes !== null) claims.set(`${sessionId}/${name}`, { sessionId, name, bytes })
    }
  }
  return { runs, claims, owners }
}

/**
 * The shell effect log in a chaos workspace: one line per shell execution, holding its token.
 * @category models
 */
export const SHELL_EFFECTS_FILE = 'effects.log'

/**
 * The folder `write_file` effects land in: one file per execution, `<token>` (renamed `<token>.seen-<n>` once counted).
 * @category models
 */
export const WRITE_EFFECTS_DIR = 'w'

/**
 * Counts the side effects recorded in a workspace: each line of `effects.log` is one shell
 * execution; each file `w/<token>` or `w/<token>.seen-<n>` is one write_file execution observed
 * (see `stampWriteEffects`).
 * @category constructors
 */
export const readEffects = async (workspace: string): Promise<EffectCounts> => {
  const counts = new Map<string, number>()
  const bump = (token: string) => counts.set(token, (counts.get(token) ?? 0) + 1)
  const log = await readOrNull(join(workspace, SHELL_EFFECTS_FILE))
  if (log !== null) {
    for (const line of log.toString('utf8').split('\n')) if (line !== '') bump(line)
  }
  for (const name of await listNames(join(workspace, WRITE_EFFECTS_DIR))) bump(name.replace(/\.seen-\d+$/, ''))
  return counts
}
