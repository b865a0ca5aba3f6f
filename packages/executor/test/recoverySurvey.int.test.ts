/**
 * Startup recovery over a store that reads many sessions' facts at once (`StorePorts.survey`, the SQL
 * stores): the survey answers from the bulk facts, a page of sessions at a time, and only a session
 * that needs a repair is read one by one (under its lock). The report is the one recovery gives
 * reading session by session.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, describe, expect, it } from 'vitest'
import {
  type AgentRun,
  type SessionRecord,
  makeAbsolutePathUnsafe,
  makeIsoTimestampUnsafe,
  makeNonEmptyStringUnsafe,
  makeRunIdUnsafe,
  makeSessionIdUnsafe,
} from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { makeHostInspector } from '@maka/host-inspector'
import { type StorePorts, SURVEY_PAGE_SESSIONS } from '@maka/stores'
import { openSqliteStores } from '@maka/store-sqlite'
import { makeOwnership, makeStartupRecovery, sessionStatePort } from '../src/index.js'

const dirs: Array<string> = []
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

const AT = '2026-01-01T00:00:00.000Z'
const SESSIONS = SURVEY_PAGE_SESSIONS + 40
const sessionIdOf = (i: number) => `session-${String(i).padStart(4, '0')}`
// Two sessions on the second page need a write: a run left running, a finished header whose
// ledger ends in another status.
const OPEN = sessionIdOf(SURVEY_PAGE_SESSIONS + 3)
const DISAGREES = sessionIdOf(SURVEY_PAGE_SESSIONS + 17)

const must = async <A>(task: () => Promise<E.Either<{ readonly _tag: string }, A>>): Promise<A> => {
  const result = await task()
  if (E.isLeft(result)) throw new Error(result.left._tag)
  return result.right
}

// A SQLite store holding SESSIONS sessions of one run each; `open` left running, `disagrees`
// finished with a ledger that ends in another status.
const givenStore = async (open_ = OPEN, disagrees = DISAGREES): Promise<StorePorts> => {
  const dir = await mkdtemp(join(tmpdir(), 'maka-survey-'))
  dirs.push(dir)
  const stores = openSqliteStores(join(dir, 'maka.sqlite'))
  for (let i = 0; i < SESSIONS; i += 1) {
    const sessionId = sessionIdOf(i)
    const ids = { sessionId, runId: 'run-1', invocationId: 'inv-1', turnId: 'turn-1' }
    const record: SessionRecord = {
      sessionId: makeSessionIdUnsafe(sessionId),
      cwd: makeAbsolutePathUnsafe('/work/project'),
      createdAt: makeIsoTimestampUnsafe(AT),
    }
    await must(stores.sessions.create(record))
    const open = sessionId === open_
    const header: AgentRun = {
      sessionId: makeSessionIdUnsafe(sessionId),
      runId: makeRunIdUnsafe('run-1'),
      invocationId: makeNonEmptyStringUnsafe('inv-1'),
      turnId: makeNonEmptyStringUnsafe('turn-1'),
      cwd: makeAbsolutePathUnsafe('/work/project'),
      providerId: makeNonEmptyStringUnsafe('provider'),
      modelId: makeNonEmptyStringUnsafe('model'),
      status: open ? 'running' : 'completed',
      createdAt: makeIsoTimestampUnsafe(AT),
      updatedAt: makeIsoTimestampUnsafe(AT),
      ...(open ? {} : { completedAt: makeIsoTimestampUnsafe(AT) }),
    }
    await must(stores.runs.create(header))
    const b = makeLedgerBuilderUnsafe(ids)
    const rows = open
      ? [b.userText('x')]
      : [b.userText('x'), sessionId === disagrees ? b.terminal() : b.terminal({ status: 'completed' })]
    for (const row of rows) await must(stores.events.append(sessionId, 'run-1', row, { durable: true }))
  }
  return stores
}

// The stores with each per-session read the survey would make counted, by session.
const counting = (stores: StorePorts, reads: Array<string>, keepSurvey: boolean): StorePorts => {
  const { survey: _survey, ...rest } = stores
  const count = <F extends (sessionId: string, ...more: Array<never>) => unknown>(what: string, f: F): F =>
    ((sessionId: string, ...more: Array<never>) => {
      reads.push(`${what} ${sessionId}`)
      return f(sessionId, ...more)
    }) as F
  return {
    ...rest,
    ...(keepSurvey && stores.survey !== undefined ? { survey: stores.survey } : {}),
    ownerLocks: { ...stores.ownerLocks, read: count('lock', stores.ownerLocks.read) },
    shellRuns: { ...stores.shellRuns, list: count('shell', stores.shellRuns.list) },
    claims: { ...stores.claims, list: count('claims', stores.claims.list) },
    runs: { ...stores.runs, list: count('runs', stores.runs.list) },
    events: { ...stores.events, readLastRow: count('last', stores.events.readLastRow) },
  }
}

const recoverOver = async (stores: StorePorts) => {
  const inspector = makeHostInspector({ port: sessionStatePort(stores), toolNames: () => [] })
  const report = await makeStartupRecovery({
    stores,
    inspector,
    clock: () => new Date(AT),
    ...makeOwnership(stores, inspector),
  })()
  return report
}

describe('recover, over a store with a survey', () => {
  it('reads the sessions a page at a time and only those that need a repair one by one, reporting as before', async () => {
    const bulk = await givenStore()
    const bulkReads: Array<string> = []
    const surveyed = await recoverOver(counting(bulk, bulkReads, true))

    const single = await givenStore()
    const singleReads: Array<string> = []
    const oneByOne = await recoverOver(counting(single, singleReads, false))

    expect(surveyed).toEqual(oneByOne)
    expect(surveyed.actions).toEqual([
      expect.objectContaining({ sessionId: OPEN, runId: 'run-1', action: 'recovered_terminal' }),
      expect.objectContaining({ sessionId: DISAGREES, runId: 'run-1', action: 'header_repaired' }),
    ])
    // Session by session, every session is read; with the survey, only the two repaired ones, under their lock.
    expect(new Set(singleReads.map((read) => read.split(' ')[1])).size).toBe(SESSIONS)
    expect(new Set(bulkReads.map((read) => read.split(' ')[1]))).toEqual(new Set([OPEN, DISAGREES]))
    expect(bulkReads.filter((read) => read.startsWith('lock '))).toEqual([])
    await bulk.close?.()
    await single.close?.()
  }, 120_000)

  it("reads the next page's facts before it repairs a session of this page", async () => {
    const open = sessionIdOf(3)
    const stores = await givenStore(open, sessionIdOf(SURVEY_PAGE_SESSIONS + 17))
    const survey = stores.survey
    if (survey === undefined) throw new Error('the SQLite store offers no survey')
    const reads: Array<string> = []
    const logged = counting(stores, reads, false)
    const report = await recoverOver({
      ...logged,
      survey: {
        read: (sessionIds) => {
          reads.push(`survey ${sessionIds[0] ?? ''}`)
          return survey.read(sessionIds)
        },
      },
    })
    expect(report.actions).toEqual([
      expect.objectContaining({ sessionId: open, runId: 'run-1', action: 'recovered_terminal' }),
      expect.objectContaining({ sessionId: sessionIdOf(SURVEY_PAGE_SESSIONS + 17), action: 'header_repaired' }),
    ])
    const secondPage = reads.indexOf(`survey ${sessionIdOf(SURVEY_PAGE_SESSIONS)}`)
    expect(reads[0]).toBe(`survey ${sessionIdOf(0)}`)
    expect(secondPage).toBeGreaterThan(0)
    expect(secondPage).toBeLessThan(reads.indexOf(`runs ${open}`))
    await stores.close?.()
  }, 120_000)
})
