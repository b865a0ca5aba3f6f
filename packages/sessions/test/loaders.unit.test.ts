/**
 * The loaders over any store ports: in-memory ports whose every write throws, so a test passes only
 * if reading sessions writes nothing, and an owner-lock judge that records what it was asked.
 * (`@maka/executor`'s integration tests run the same loaders over real files.)
 */
import {
  type AgentRun,
  type OwnerLock,
  type RuntimeEvent,
  type SessionRecord,
  OwnerLock as OwnerLockCodec,
  SessionRecord as SessionRecordCodec,
  decodeWith,
  makeRunIdUnsafe,
  makeSessionIdUnsafe,
} from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { type StoreError, notFound, unreadable } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { describe, expect, it } from 'vitest'
import {
  type OwnerLockLiveness,
  type SessionStores,
  findMostRecentSession,
  listSessionRuns,
  listSessionSummaries,
  loadSessionHistory,
  sessionHistory,
  summarizeStoredSession,
} from '../src/index.js'
import { header, ledgerOf } from './givenSession.js'

// -------------------------------------------------------------------------------------
// given
// -------------------------------------------------------------------------------------

const decoded = <A>(result: E.Either<string, A>): A => {
  if (E.isLeft(result)) throw new Error(`bad fixture: ${result.left}`)
  return result.right
}

const record = (sessionId: string, createdAt: string): SessionRecord =>
  decoded(decodeWith(SessionRecordCodec)({ sessionId, cwd: '/work/project', createdAt }))

const lock: OwnerLock = decoded(
  decodeWith(OwnerLockCodec)({ pid: 4242, hostname: 'box', startedAt: '2026-01-01T00:00:00.000Z' }),
)

interface StoredSession {
  readonly record: SessionRecord | StoreError
  readonly runs: ReadonlyArray<{ readonly runId: string; readonly header: AgentRun | StoreError }>
  readonly ledgers?: Readonly<Record<string, ReadonlyArray<RuntimeEvent>>>
  readonly lock?: OwnerLock
}

// A port object that answers `reads` and throws on anything else: the read model must call no write.
const readOnly = <T extends object>(name: string, reads: Partial<T>): T =>
  new Proxy(reads, {
    get: (target, key) =>
      key in target
        ? (target as Record<PropertyKey, unknown>)[key]
        : () => {
            throw new Error(`the read model called ${name}.${String(key)}`)
          },
  }) as T

const isError = (value: object): value is StoreError => '_tag' in value

const givenStores = (sessions: Readonly<Record<string, StoredSession>>): SessionStores => {
  const session = (id: string): StoredSession | undefined => sessions[id]
  return {
    sessions: readOnly<SessionStores['sessions']>('sessions', {
      list: () => TE.right(Object.keys(sessions).map(makeSessionIdUnsafe)),
      read: (id) => {
        const stored = session(id)?.record ?? notFound(`sessions/${id}/session.json`)
        return isError(stored) ? TE.left(stored) : TE.right(stored)
      },
    }),
    runs: readOnly<SessionStores['runs']>('runs', {
      list: (id) =>
        TE.right(
          (session(id)?.runs ?? []).map(({ runId, header }) =>
            isError(header)
              ? { runId: makeRunIdUnsafe(runId), error: header }
              : { runId: makeRunIdUnsafe(runId), header },
          ),
        ),
    }),
    events: readOnly<SessionStores['events']>('events', {
      read: (id, runId) => {
        const rows = session(id)?.ledgers?.[runId]
        return rows === undefined ? TE.left(notFound(`${runId}/events.jsonl`)) : TE.right(ledgerOf(rows))
      },
    }),
    ownerLocks: readOnly<SessionStores['ownerLocks']>('ownerLocks', {
      read: (id) => TE.right(session(id)?.lock ?? null),
    }),
  }
}

// A judge that calls every lock alive and remembers what it was shown.
const givenJudge = () => {
  const asked: Array<OwnerLock | null> = []
  const judge: OwnerLockLiveness = (shown) => {
    asked.push(shown)
    return Promise.resolve(shown === null ? 'none' : 'alive')
  }
  return { judge, asked }
}

const run = (
  sessionId: string,
  runId: string,
  createdAt: string,
  overrides: Record<string, unknown> = {},
  omit: ReadonlyArray<string> = [],
) => header({ sessionId, runId, createdAt, updatedAt: createdAt, ...overrides }, omit)

const older = run('s-old', 'run-a', '2026-01-01T00:00:00.000Z')
const newer = run('s-new', 'run-b', '2026-01-01T01:00:00.000Z', { status: 'running' }, ['failureClass'])

const world = givenStores({
  's-new': { record: record('s-new', '2026-01-01T01:00:00.000Z'), runs: [{ runId: 'run-b', header: newer }] },
  's-old': {
    record: record('s-old', '2026-01-01T00:00:00.000Z'),
    runs: [
      { runId: 'run-a', header: older },
      { runId: 'run-half', header: notFound('run-half/run.json') },
    ],
    lock,
  },
  broken: { record: unreadable('sessions/broken/session.json', 'not JSON'), runs: [] },
})

// -------------------------------------------------------------------------------------
// when / then
// -------------------------------------------------------------------------------------

describe('the session loaders', () => {
  describe('when every session is listed', () => {
    it('orders them oldest first and judges each owner lock through the port, writing nothing', async () => {
      const { judge, asked } = givenJudge()
      const summaries = await listSessionSummaries(world, judge)
      if (E.isLeft(summaries)) throw new Error(summaries.left)
      expect(summaries.right.map((s) => [s.sessionId, s.error ?? null])).toEqual([
        ['broken', 'Unreadable'],
        ['s-old', null],
        ['s-new', null],
      ])
      const [, old, fresh] = summaries.right
      expect(old).toMatchObject({ runCount: 1, ownerAlive: true, interrupted: true, latestRun: { runId: 'run-a' } })
      expect(fresh).toMatchObject({ ownerAlive: false, interrupted: true, latestRun: { runId: 'run-b' } })
      expect(asked).toContainEqual(lock)
      expect(await summarizeStoredSession(world, 's-old', judge)).toEqual(old)
      // The fake refuses writes, so these reads made none.
      expect(() => world.runs.update(older)).toThrow('the read model called runs.update')
    })
  })

  describe('when a run folder has no header', () => {
    it('is no run', async () => {
      expect(await listSessionRuns(world, 's-old')).toEqual(E.right([{ runId: 'run-a', header: older }]))
    })
  })

  describe('when the most recent session is picked', () => {
    it('is the newest readable one, and the unreadable ones are named', async () => {
      expect(await findMostRecentSession(world)).toEqual(
        E.right({ sessionId: 's-new', unreadable: [{ sessionId: 'broken', error: 'Unreadable' }] }),
      )
    })
  })

  describe("when a session's memory is loaded", () => {
    it('is the pure history of the runs it read', async () => {
      const ids = { sessionId: 's-mem', invocationId: 'invocation-1', runId: 'run-m', turnId: 'turn-1' }
      const l = makeLedgerBuilderUnsafe(ids)
      const rows = [l.userText('hello'), l.modelText('hi'), l.terminal({ status: 'completed' })]
      const done = run('s-mem', 'run-m', '2026-01-01T02:00:00.000Z', { status: 'completed' }, ['failureClass'])
      const stores = givenStores({
        's-mem': {
          record: record('s-mem', '2026-01-01T02:00:00.000Z'),
          runs: [{ runId: 'run-m', header: done }],
          ledgers: { 'run-m': rows },
        },
      })
      const history = await loadSessionHistory(stores, 's-mem')
      expect(history).toEqual(sessionHistory([{ header: done, ledger: ledgerOf(rows) }]))
      expect(E.isRight(history) && history.right.length).toBeGreaterThan(0)
    })
  })
})
