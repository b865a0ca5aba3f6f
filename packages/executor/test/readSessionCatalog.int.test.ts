/**
 * The session catalog (`@maka/sessions`) on real files the executor wrote: the reads a host lists and
 * shows sessions through name the run the planner's "latest" entry picks, and skip what the planner skips.
 */
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { AgentRun, RuntimeEvent } from '@maka/events'
import { ownerLockLiveness } from '@maka/host-inspector'
import { latestCandidate } from '@maka/planner'
import {
  findMostRecentSession,
  listSessionRuns,
  listSessionSummaries,
  loadSessionOutline,
  summarizeStoredSession,
} from '@maka/sessions'
import { plannerStorePort } from '../src/index.js'
import { trackWorlds } from './support/world.js'

const world = trackWorlds()

const givenSession = async () => {
  const w = await world()
  const turn = await w.runtime.runTurn({ cwd: w.workspace, prompt: 'hello' })
  if (turn._tag !== 'Finished') throw new Error(JSON.stringify(turn))
  return { w, sessionId: turn.sessionId, base: await w.header(turn.sessionId, turn.runId) }
}

// A host's narration: here only the content kind (a row with a tool call id would name it too).
const eventKind =
  () =>
  (event: RuntimeEvent): { readonly kind: string; readonly toolCallId?: string } => ({
    kind: event.content?.kind ?? 'none',
  })

describe('readSessionCatalog', () => {
  describe('when a run stamped with a UTC offset sorts after the newest run as text', () => {
    it('names the run the planner picks as latest, in the listing and the lineage', async () => {
      const { w, sessionId, base } = await givenSession()
      // 00:30 at +01:00 is 23:30Z the day before: earlier than run-late, though its text sorts after it.
      const { completedAt: _c, failureClass: _f, ...plain } = base
      const late = {
        ...plain,
        runId: 'run-late',
        invocationId: 'inv-late',
        turnId: 'turn-late',
        status: 'running',
        createdAt: '2099-01-01T00:00:00.000Z',
        updatedAt: '2099-01-01T00:00:00.000Z',
      } as AgentRun
      const offset = {
        ...late,
        runId: 'run-offset',
        invocationId: 'inv-offset',
        turnId: 'turn-offset',
        createdAt: '2099-01-01T00:30:00.000+01:00',
        updatedAt: '2099-01-01T00:30:00.000+01:00',
      } as AgentRun
      expect(E.isRight(await w.stores.runs.create(late)())).toBe(true)
      expect(E.isRight(await w.stores.runs.create(offset)())).toBe(true)
      // A create that never completed: a folder without its header is no run.
      await mkdir(join(w.dataDir, 'sessions', sessionId, 'runs', 'run-half'), { recursive: true })

      const listing = await plannerStorePort(w.stores).listRuns(sessionId)()
      if (E.isLeft(listing)) throw new Error('the runs cannot be listed')
      expect(latestCandidate(listing.right)).toEqual(E.right('run-late'))

      const summaries = await listSessionSummaries(w.stores, ownerLockLiveness)
      if (E.isLeft(summaries)) throw new Error(summaries.left)
      expect(summaries.right).toEqual([
        expect.objectContaining({
          sessionId,
          runCount: 3,
          unreadableRuns: [],
          latestRun: expect.objectContaining({ runId: 'run-late', kind: 'turn', status: 'running' }),
          interrupted: true,
        }),
      ])
      // A host showing this one session reads only its files and says the same of it.
      expect(await summarizeStoredSession(w.stores, sessionId, ownerLockLiveness)).toEqual(summaries.right[0])
      expect(await findMostRecentSession(w.stores)).toEqual(E.right({ sessionId, unreadable: [] }))

      const runs = await listSessionRuns(w.stores, sessionId)
      expect(
        E.map((listed: ReadonlyArray<{ readonly runId: string }>) => listed.map((r) => r.runId).sort())(runs),
      ).toEqual(E.right([base.runId, 'run-late', 'run-offset'].sort()))

      const record = await w.stores.sessions.read(sessionId)()
      if (E.isLeft(record)) throw new Error('no session record')
      const outline = await loadSessionOutline(w.stores, record.right, eventKind)
      if (E.isLeft(outline)) throw new Error(outline.left)
      expect(outline.right.runs.map((run) => run.runId)).toEqual([base.runId, 'run-offset', 'run-late'])
      expect(outline.right.roots).toEqual([base.runId, 'run-offset', 'run-late'])
      const timeline: Array<{ readonly index: number; readonly kind: string }> = []
      expect(await outline.right.timeline(base.runId, (entries) => void timeline.push(...entries))).toEqual(
        E.right(undefined),
      )
      expect(timeline.length).toBe(outline.right.runs[0]?.highWater)
      expect(timeline[0]).toMatchObject({ index: 1, kind: 'text' })
    })
  })
})
