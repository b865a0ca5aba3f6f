/**
 * `maka store copy --from A --to B`: copies every session of one store into another (docs/decisions.md
 * #83). Everything is read and decoded first — a source that does not read whole copies nothing — and
 * a destination that already holds one of the sessions is refused before anything is written. After
 * the writes every run is read back from the destination and compared with the source: row counts,
 * a SHA-256 over the rows, headers, claims and shell runs.
 */
import { createHash } from 'node:crypto'
import type { AgentRun, ContinuationClaim, RuntimeEvent, SessionRecord, ShellRun } from '@maka/events'
import { describeStoreError, type StoreError, type StorePorts } from '@maka/stores'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { StoreCopyFlags } from '../CommandFlags.js'
import { BadInputError, ExitCode, WriteFailedError } from '../ExitCode.js'
import { describeStore, openChosenStores, parseStoreSpec, sqliteFileExists, type StoreSpec } from '../storeChoice.js'
import { say, sayJson } from './commandContext.js'

interface RunCopy {
  readonly header: AgentRun
  readonly events: ReadonlyArray<RuntimeEvent>
  readonly digest: string
}

interface SessionCopy {
  readonly sessionId: string
  readonly record: SessionRecord | null
  readonly runs: ReadonlyArray<RunCopy>
  readonly claims: ReadonlyArray<ContinuationClaim>
  readonly shellRuns: ReadonlyArray<ShellRun>
}

class SourceUnreadable extends Error {}

const digestOf = (events: ReadonlyArray<RuntimeEvent>): string => {
  const hash = createHash('sha256')
  for (const event of events) hash.update(`${JSON.stringify(event)}\n`)
  return hash.digest('hex')
}

const must = async <A>(task: TE.TaskEither<StoreError, A>, what: string): Promise<A> => {
  const result = await task()
  if (result._tag === 'Left') throw new SourceUnreadable(`${what}: ${describeStoreError(result.left)}`)
  return result.right
}

const written = async <A>(task: TE.TaskEither<StoreError, A>, what: string): Promise<A> => {
  const result = await task()
  if (result._tag === 'Left') {
    throw new WriteFailedError(`store copy stopped while writing ${what}: ${describeStoreError(result.left)}`)
  }
  return result.right
}

// Reads one session whole, decoding every record and row; anything that does not read is refused.
const readSession = async (source: StorePorts, sessionId: string): Promise<SessionCopy> => {
  const recordRead = await source.sessions.read(sessionId)()
  if (recordRead._tag === 'Left' && recordRead.left._tag !== 'NotFound') {
    throw new SourceUnreadable(`session ${sessionId}: ${describeStoreError(recordRead.left)}`)
  }
  const runs: Array<RunCopy> = []
  for (const entry of await must(source.runs.list(sessionId), `runs of session ${sessionId}`)) {
    // A run folder without run.json is a create that never completed: that run never existed.
    if ('error' in entry) {
      if (entry.error._tag === 'NotFound') continue
      throw new SourceUnreadable(`run ${entry.runId} of session ${sessionId}: ${describeStoreError(entry.error)}`)
    }
    const snapshot = await must(source.events.read(sessionId, entry.runId), `ledger of run ${entry.runId}`)
    if (snapshot.problem !== null) {
      throw new SourceUnreadable(
        `the ledger of run ${entry.runId} in session ${sessionId} is not whole (${snapshot.problem._tag} at line ${snapshot.problem.line})`,
      )
    }
    runs.push({ header: entry.header, events: snapshot.events, digest: digestOf(snapshot.events) })
  }
  const claims = await must(source.claims.list(sessionId), `claims of session ${sessionId}`)
  const targets = new Set(runs.map((run) => run.header.runId as string))
  for (const claim of claims) {
    if (!targets.has(claim.targetRunId)) {
      throw new SourceUnreadable(
        `the claim ${claim.sourceRunId}@${claim.sourceRuntimeEventHighWater} of session ${sessionId} has no target run; run maka recover on the source first`,
      )
    }
  }
  const shellRuns: Array<ShellRun> = []
  for (const entry of await must(source.shellRuns.list(sessionId), `shell runs of session ${sessionId}`)) {
    if ('error' in entry) {
      throw new SourceUnreadable(
        `shell run ${entry.shellRunId} of session ${sessionId}: ${describeStoreError(entry.error)}`,
      )
    }
    shellRuns.push(entry.shellRun)
  }
  return { sessionId, record: recordRead._tag === 'Right' ? recordRead.right : null, runs, claims, shellRuns }
}

const holdsSession = async (destination: StorePorts, sessionId: string): Promise<boolean> => {
  const listed = await destination.sessions.list()()
  if (listed._tag === 'Left')
    throw new BadInputError(`The destination cannot be read: ${describeStoreError(listed.left)}`)
  return listed.right.some((listedId) => listedId === sessionId)
}

const writeSession = async (destination: StorePorts, copy: SessionCopy): Promise<void> => {
  const { sessionId } = copy
  if (copy.record !== null) await written(destination.sessions.create(copy.record), `session ${sessionId}`)
  const claimOf = new Map(copy.claims.map((claim) => [claim.targetRunId as string, claim]))
  for (const run of copy.runs) {
    const { header } = run
    const claim = claimOf.get(header.runId)
    // A claimed target is written with its claim, in the one operation the store makes atomic.
    if (claim === undefined) await written(destination.runs.create(header), `run ${header.runId}`)
    else await written(destination.claims.claimBoundary(claim, header), `run ${header.runId} and its claim`)
    for (const [i, event] of run.events.entries()) {
      const last = i === run.events.length - 1
      await written(
        destination.events.append(sessionId, header.runId, event, { durable: last, expectedHighWater: i }),
        `row ${i + 1} of run ${header.runId}`,
      )
    }
  }
  for (const shellRun of copy.shellRuns)
    await written(destination.shellRuns.write(shellRun), `shell run ${shellRun.shellRunId}`)
}

// Reads the session back from the destination and compares it with what was read from the source.
const verifySession = async (destination: StorePorts, copy: SessionCopy): Promise<ReadonlyArray<string>> => {
  const problems: Array<string> = []
  const { sessionId } = copy
  for (const run of copy.runs) {
    const header = await destination.runs.read(sessionId, run.header.runId)()
    if (header._tag === 'Left' || JSON.stringify(header.right) !== JSON.stringify(run.header)) {
      problems.push(`run ${run.header.runId}: header differs`)
    }
    const snapshot = await destination.events.read(sessionId, run.header.runId)()
    if (snapshot._tag === 'Left' || snapshot.right.problem !== null) {
      problems.push(`run ${run.header.runId}: ledger does not read back whole`)
      continue
    }
    if (snapshot.right.highWater !== run.events.length) {
      problems.push(`run ${run.header.runId}: ${snapshot.right.highWater} rows, source has ${run.events.length}`)
    } else if (digestOf(snapshot.right.events) !== run.digest) {
      problems.push(`run ${run.header.runId}: rows differ (digest)`)
    }
  }
  // A copy re-encodes rows, so a link's recorded prefix digest (Phase 2) is checked against the
  // copied ancestor's rows as the destination stores them: a chain whose link no longer finds it
  // would never be planned again.
  for (const run of copy.runs) {
    const link = run.header.continuationSource
    if (link?.sourceRuntimeEventPrefixDigest === undefined) continue
    const scan = await destination.events.fold(sessionId, link.sourceRunId, () => undefined, {
      digestAt: link.sourceRuntimeEventHighWater,
    })()
    const found =
      scan._tag === 'Right' && scan.right.digestAt !== undefined ? `sha256:${scan.right.digestAt.digest}` : null
    if (found !== link.sourceRuntimeEventPrefixDigest) {
      problems.push(
        `run ${run.header.runId}: the prefix digest it records of run ${link.sourceRunId} differs in the copy`,
      )
    }
  }
  const claims = await destination.claims.list(sessionId)()
  if (claims._tag === 'Left' || claims.right.length !== copy.claims.length) problems.push('claims differ')
  const shellRuns = await destination.shellRuns.list(sessionId)()
  if (shellRuns._tag === 'Left' || shellRuns.right.length !== copy.shellRuns.length) problems.push('shell runs differ')
  return problems.map((problem) => `session ${sessionId}: ${problem}`)
}

const sameStore = (a: StoreSpec, b: StoreSpec): boolean =>
  (a.kind === 'jsonl' && b.kind === 'jsonl' && a.dir === b.dir) ||
  (a.kind === 'sqlite' && b.kind === 'sqlite' && a.file === b.file) ||
  (a.kind === 'postgres' && b.kind === 'postgres' && a.url === b.url)

/**
 * Copies every session of `--from` into `--to`.
 * @category constructors
 */
export const storeCopy = async (flags: StoreCopyFlags): Promise<ExitCode> => {
  const from = parseStoreSpec(flags.from, '--from')
  const to = parseStoreSpec(flags.to, '--to')
  if (sameStore(from, to)) throw new BadInputError('--from and --to name the same store: nothing to copy.')
  if (from.kind === 'sqlite' && !(await sqliteFileExists(from.file))) {
    throw new BadInputError(`The source store ${describeStore(from)} does not exist.`)
  }
  const source = await openChosenStores(from, { create: false })
  const destination = await openChosenStores(to, { create: true })
  try {
    const listed = await source.sessions.list()()
    if (listed._tag === 'Left') throw new BadInputError(`The source cannot be read: ${describeStoreError(listed.left)}`)
    const sessionIds = listed.right
    const clashes: Array<string> = []
    for (const sessionId of sessionIds) if (await holdsSession(destination, sessionId)) clashes.push(sessionId)
    if (clashes.length > 0) {
      throw new BadInputError(
        `The destination already holds ${clashes.length === 1 ? 'session' : 'sessions'} ${clashes.join(', ')}: store copy never overwrites; nothing was copied.`,
      )
    }
    let copies: Array<SessionCopy>
    try {
      copies = []
      for (const sessionId of sessionIds) copies.push(await readSession(source, sessionId))
    } catch (error) {
      if (!(error instanceof SourceUnreadable)) throw error
      throw new BadInputError(`The source does not read whole, so nothing was copied: ${error.message}.`)
    }
    for (const copy of copies) await writeSession(destination, copy)
    const problems: Array<string> = []
    for (const copy of copies) problems.push(...(await verifySession(destination, copy)))
    const runs = copies.reduce((n, copy) => n + copy.runs.length, 0)
    const rows = copies.reduce((n, copy) => n + copy.runs.reduce((m, run) => m + run.events.length, 0), 0)
    const summary = {
      from: describeStore(from),
      to: describeStore(to),
      sessions: copies.length,
      runs,
      rows,
      claims: copies.reduce((n, copy) => n + copy.claims.length, 0),
      shellRuns: copies.reduce((n, copy) => n + copy.shellRuns.length, 0),
      verified: problems.length === 0,
      problems,
    }
    if (flags.json === true) sayJson(summary)
    else {
      say(
        `Copied ${summary.sessions} session${summary.sessions === 1 ? '' : 's'}, ${runs} run${runs === 1 ? '' : 's'}, ${rows} row${rows === 1 ? '' : 's'} from ${summary.from} to ${summary.to}.`,
      )
      if (problems.length === 0) say('Verified: every run reads back with the same rows, digests and headers.')
      for (const problem of problems) say(`- ${problem}`)
    }
    return problems.length === 0 ? ExitCode.ok : ExitCode.failed
  } finally {
    await source.close?.()
    await destination.close?.()
  }
}
