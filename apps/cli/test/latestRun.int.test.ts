/**
 * `maka sessions` and `maka resume plan` name the same latest run: both go through the planner's one
 * rule (newest top-level run by the instant of `createdAt`, then `runId`; child runs excluded), even
 * where the header strings order differently from the instants they stand for.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { interruptedSession, json, removeScratch, runCli, runHeaders, scratch } from './support.js'

interface SessionsJson {
  readonly sessions: ReadonlyArray<{
    readonly sessionId: string
    readonly latestRun: { readonly runId: string } | null
  }>
}

const runDir = (dataDir: string, sessionId: string, runId: string) =>
  join(dataDir, 'sessions', sessionId, 'runs', runId)

const rewriteHeader = async (dataDir: string, sessionId: string, runId: string, patch: Record<string, unknown>) => {
  const path = join(runDir(dataDir, sessionId, runId), 'run.json')
  const header = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>
  await writeFile(path, `${JSON.stringify({ ...header, ...patch }, null, 2)}\n`)
}

/** A second run header in the session, a copy of `from`'s with its own id (no ledger: listings read headers only). */
const addHeader = async (
  dataDir: string,
  sessionId: string,
  from: Record<string, unknown>,
  patch: Record<string, unknown>,
) => {
  const runId = String(patch['runId'])
  await mkdir(runDir(dataDir, sessionId, runId), { recursive: true })
  await writeFile(
    join(runDir(dataDir, sessionId, runId), 'run.json'),
    `${JSON.stringify({ ...from, ...patch }, null, 2)}\n`,
  )
}

const latestOfSessions = async (data: ReadonlyArray<string>, sessionId: string): Promise<string | undefined> => {
  const listed = await runCli(['sessions', ...data, '--json'])
  expect(listed.code).toBe(0)
  return json<SessionsJson>(listed).sessions.find((s) => s.sessionId === sessionId)?.latestRun?.runId
}

const sourceOfPlan = async (data: ReadonlyArray<string>, sessionId: string): Promise<string | null> => {
  const planned = await runCli(['resume', 'plan', ...data, '--session', sessionId, '--json'], { flag: true })
  return json<{ readonly sourceRunId: string | null }>(planned).sourceRunId
}

describe('the latest run of a session', () => {
  let env: Awaited<ReturnType<typeof scratch>>
  let data: ReadonlyArray<string>

  afterAll(removeScratch)

  beforeAll(async () => {
    env = await scratch()
    data = ['--data-dir', env.dataDir]
  })

  describe('when a header with a UTC offset sorts after a later instant as text', () => {
    it('is the same run for sessions and resume plan: the later instant', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'offsets', env.root)
      const [header] = await runHeaders(env.dataDir, 'offsets')
      if (header === undefined) throw new Error('no run was made')
      const runId = String(header['runId'])
      // 00:30Z is later than 01:00+01:00 (= 00:00Z), but "…T01:00…" > "…T00:30…" as text.
      await rewriteHeader(env.dataDir, 'offsets', runId, {
        createdAt: '2026-01-01T00:30:00.000Z',
        updatedAt: '2026-01-01T00:30:00.000Z',
      })
      await addHeader(env.dataDir, 'offsets', header, {
        runId: 'run_offset_earlier',
        createdAt: '2026-01-01T01:00:00.000+01:00',
        updatedAt: '2026-01-01T01:00:00.000+01:00',
      })

      const planned = await sourceOfPlan(data, 'offsets')
      expect(planned).toBe(runId)
      expect(await latestOfSessions(data, 'offsets')).toBe(planned)
    })
  })

  describe('when two top-level runs were created at the same instant, written differently', () => {
    it('is the same run for sessions and resume plan: the greater run id', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'ties', env.root)
      const [header] = await runHeaders(env.dataDir, 'ties')
      if (header === undefined) throw new Error('no run was made')
      const runId = String(header['runId'])
      await rewriteHeader(env.dataDir, 'ties', runId, {
        createdAt: '2026-01-01T00:00:00Z',
        updatedAt: '2026-01-01T00:00:00Z',
      })
      // Same instant; as text "…00.000Z" < "…00Z", so the old comparator put this one first.
      await addHeader(env.dataDir, 'ties', header, {
        runId: `${runId}_z`,
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
      })

      const planned = await sourceOfPlan(data, 'ties')
      expect(planned).toBe(`${runId}_z`)
      expect(await latestOfSessions(data, 'ties')).toBe(planned)
    })
  })
})
