/**
 * Given-builders of the suite: records with unchecked ids, in the exact shapes the codecs accept.
 */
import {
  makeAbsolutePathUnsafe,
  makeIsoTimestampUnsafe,
  makeNonEmptyStringUnsafe,
  makeNonNegativeIntUnsafe,
  makeRunIdUnsafe,
  makeSessionIdUnsafe,
  makeShellRunIdUnsafe,
  type AgentRun,
  type ContinuationClaim,
  type OwnerLock,
  type RuntimeEvent,
  type SessionRecord,
  type ShellRun,
} from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { describeStoreError, type StoreError } from '@maka/stores'
import type * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'

/** A run's identity as the builders use it. */
export interface Identity {
  readonly sessionId: string
  readonly invocationId: string
  readonly runId: string
  readonly turnId: string
}

const AT = '2026-01-02T03:04:05.678Z'

/** The identity of run `n` of a session. */
export const runIdentity = (sessionId: string, n: number): Identity => ({
  sessionId,
  invocationId: `invocation-${n}`,
  runId: `run-${n}`,
  turnId: `turn-${n}`,
})

/** A session record. */
export const sessionRecord = (sessionId: string): SessionRecord => ({
  sessionId: makeSessionIdUnsafe(sessionId),
  cwd: makeAbsolutePathUnsafe('/work/project'),
  createdAt: makeIsoTimestampUnsafe(AT),
  title: 'a session',
})

/** An AgentRun header, status `created`. */
export const runHeader = (id: Identity, overrides: Partial<AgentRun> = {}): AgentRun => ({
  runId: makeRunIdUnsafe(id.runId),
  sessionId: makeSessionIdUnsafe(id.sessionId),
  turnId: makeNonEmptyStringUnsafe(id.turnId),
  invocationId: makeNonEmptyStringUnsafe(id.invocationId),
  status: 'created',
  cwd: makeAbsolutePathUnsafe('/work/project'),
  providerId: makeNonEmptyStringUnsafe('provider'),
  modelId: makeNonEmptyStringUnsafe('model'),
  createdAt: makeIsoTimestampUnsafe(AT),
  updatedAt: makeIsoTimestampUnsafe(AT),
  ...overrides,
})

/** A background shell operation of a run. */
export const shellRun = (id: Identity, shellRunId: string, overrides: Partial<ShellRun> = {}): ShellRun => ({
  shellRunId: makeShellRunIdUnsafe(shellRunId),
  sessionId: makeSessionIdUnsafe(id.sessionId),
  runId: makeRunIdUnsafe(id.runId),
  command: 'sleep 100',
  status: 'running',
  pid: makeNonNegativeIntUnsafe(4242),
  startedAt: makeIsoTimestampUnsafe(AT),
  ...overrides,
})

/** An owner lock naming a pid. */
export const ownerLock = (pid: number, hostname = 'host-a'): OwnerLock => ({
  pid: makeNonNegativeIntUnsafe(pid),
  hostname,
  startedAt: makeIsoTimestampUnsafe(AT),
})

/** A claim of `source`'s boundary at `highWater` by `target`, and the matching target header. */
export const claimAndHeader = (
  source: Identity,
  highWater: number,
  target: Identity,
): { readonly claim: ContinuationClaim; readonly header: AgentRun } => {
  const pin = {
    sourceInvocationId: makeNonEmptyStringUnsafe(source.invocationId),
    sourceRunId: makeRunIdUnsafe(source.runId),
    sourceTurnId: makeNonEmptyStringUnsafe(source.turnId),
    sourceRuntimeEventHighWater: makeNonNegativeIntUnsafe(highWater),
  }
  return {
    claim: {
      sessionId: makeSessionIdUnsafe(source.sessionId),
      ...pin,
      targetInvocationId: makeNonEmptyStringUnsafe(target.invocationId),
      targetRunId: makeRunIdUnsafe(target.runId),
      targetTurnId: makeNonEmptyStringUnsafe(target.turnId),
      claimedAt: makeIsoTimestampUnsafe(AT),
    },
    header: runHeader(target, {
      parentRunId: makeRunIdUnsafe(source.runId),
      parentTurnId: makeNonEmptyStringUnsafe(source.turnId),
      continuationSource: pin,
    }),
  }
}

/** `count` ledger rows of a run: the user's prompt, then alternating tool calls and responses. */
export const ledgerRows = (id: Identity, count: number): ReadonlyArray<RuntimeEvent> => {
  const rows = makeLedgerBuilderUnsafe(id)
  const out: Array<RuntimeEvent> = [rows.userText('please write the file — ünïcødé too')]
  for (let i = 1; out.length < count; i += 1) {
    out.push(rows.functionCall(`call-${i}`, 'write_file', { path: `notes-${i}.txt`, text: 'x'.repeat(i) }))
    if (out.length < count) out.push(rows.functionResponse(`call-${i}`, 'write_file', { ok: true }))
  }
  return out.slice(0, count)
}

/** Runs a store task that must succeed and returns its value. */
export const value = async <A>(task: TE.TaskEither<StoreError, A>): Promise<A> => {
  const result = await task()
  if (result._tag === 'Left') throw new Error(`expected success, got ${describeStoreError(result.left)}`)
  return result.right
}

/** Runs a store task that must fail and returns its error. */
export const failure = async <A>(task: TE.TaskEither<StoreError, A>): Promise<StoreError> => {
  const result: E.Either<StoreError, A> = await task()
  if (result._tag === 'Right') throw new Error('expected a failure, got success')
  return result.left
}
