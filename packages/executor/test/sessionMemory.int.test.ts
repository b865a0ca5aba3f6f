import { appendFile, readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ProviderMessage } from '@maka/providers'
import type { TurnResult } from '../src/index.js'
import { givenApprovedPlan, givenInterruptedRun, trackWorlds } from './support/world.js'

const world = trackWorlds()

// Every file under `dir` with its bytes, so a test can prove nothing was written.
const snapshot = async (dir: string): Promise<Record<string, string>> => {
  const out: Record<string, string> = {}
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name)
      out[path] = await readFile(path, 'utf8')
    }
  }
  return out
}

const finished = (result: TurnResult) => {
  if (result._tag !== 'Finished') throw new Error(`expected Finished, got ${JSON.stringify(result)}`)
  return result
}

// The conversation a request carried, as short lines.
const lines = (messages: ReadonlyArray<ProviderMessage>) =>
  messages.map((m) =>
    m.role === 'tool'
      ? `tool ${m.name}`
      : m.role === 'user'
        ? `user: ${m.text}`
        : `assistant: ${m.text}${m.toolCalls.map((c) => ` [${c.name}]`).join('')}`,
  )

describe('session memory', () => {
  describe('when a second turn runs in the same session', () => {
    it('sends the first turn’s user and model messages before the new prompt', async () => {
      const w = await world()
      w.script([{ text: 'Hello Ada.' }], [{ text: 'Your name is Ada.' }])
      const first = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'my name is Ada' }))
      const second = finished(
        await w.runtime.runTurn({ sessionId: first.sessionId, cwd: w.workspace, prompt: 'what is my name?' }),
      )
      const [request] = w.requestsOf(second.runId)
      expect(lines(request?.messages ?? [])).toEqual([
        'user: my name is Ada',
        'assistant: Hello Ada.',
        'user: what is my name?',
      ])
    })
  })

  describe('when earlier turns were interrupted and continued', () => {
    it('replays each lineage once, through its continuation, to later turns and later continuations', async () => {
      const w = await world()
      const source = await givenInterruptedRun(w, { prompt: 'count for me' })
      w.script([{ text: 'Counted once.' }])
      const resumed = await w.runtime.execute((await givenApprovedPlan(w, source)).plan)
      expect(resumed).toMatchObject({ _tag: 'Finished', status: 'completed' })
      const firstLineage = ['user: count for me', 'assistant:  [count]', 'tool count', 'assistant: Counted once.']

      // A later turn of the same session, interrupted after its tool result, then continued.
      const later = await givenInterruptedRun(w, { prompt: 'count again', sessionId: source.sessionId })
      expect(lines(w.requestsOf(later.runId)[0]?.messages ?? [])).toEqual([...firstLineage, 'user: count again'])
      w.script([{ text: 'Counted twice.' }])
      const { plan, continuation } = await givenApprovedPlan(w, later)
      expect(await w.runtime.execute(plan)).toMatchObject({ _tag: 'Finished', status: 'completed' })
      const secondLineage = ['user: count again', 'assistant:  [count]', 'tool count']
      expect(lines(w.requestsOf(continuation.runId)[0]?.messages ?? [])).toEqual([...firstLineage, ...secondLineage])

      w.script([{ text: 'Two.' }])
      const next = finished(
        await w.runtime.runTurn({ sessionId: source.sessionId, cwd: w.workspace, prompt: 'how many?' }),
      )
      expect(lines(w.requestsOf(next.runId)[0]?.messages ?? [])).toEqual([
        ...firstLineage,
        ...secondLineage,
        'assistant: Counted twice.',
        'user: how many?',
      ])
    })
  })

  describe('when an earlier run of the session cannot be read', () => {
    it('refuses the turn before writing anything, naming the run', async () => {
      const w = await world()
      w.script([{ text: 'Hi.' }])
      const first = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'hello' }))
      await appendFile(w.ledgerPathOf(first.sessionId, first.runId), '{"not":"a row"}\n')
      const before = await snapshot(w.dataDir)

      const result = await w.runtime.runTurn({ sessionId: first.sessionId, cwd: w.workspace, prompt: 'again' })

      expect(result).toMatchObject({ _tag: 'Refused', code: 'session_history_unreadable' })
      expect(result._tag === 'Refused' ? result.message : '').toContain(first.runId)
      expect(await snapshot(w.dataDir)).toEqual(before)
      expect(w.requests).toHaveLength(1)
    })
  })
})
