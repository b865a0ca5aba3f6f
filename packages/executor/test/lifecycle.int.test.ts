/**
 * Lifecycle events carry identities, codes and error classes only, and emitting them is
 * best-effort: a sink that throws or rejects changes nothing the runtime does.
 */
import { realpath, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { LifecycleSink } from '../src/index.js'
import { givenInterruptedRun, trackWorlds } from './support/world.js'

const PROMPT = 'PROMPT-SENTINEL-7f3a'
const ARGUMENT = 'ARGUMENT-SENTINEL-91c2'
const RESULT = 'RESULT-SENTINEL-44d8'
const ANSWER = 'ANSWER-SENTINEL-0b6e'
const SENTINELS = [PROMPT, ARGUMENT, RESULT, ANSWER]

const world = trackWorlds()

/**
 * A turn whose prompt, tool arguments and tool results hold sentinels, interrupted and recovered;
 * then a continuation that reads the secret again and answers with a sentinel; then a re-plan (parked)
 * and a stale execute (rejected). Returns everything the runtime answered and wrote, with the
 * world's own paths and inode numbers masked so two worlds can be compared.
 */
const scenario = async (sink: LifecycleSink | null | undefined) => {
  const w = await world({ builtins: true, ...(sink === undefined ? {} : { sink }) })
  await writeFile(join(w.workspace, 'secret.txt'), `the secret is ${RESULT}`)
  const source = await givenInterruptedRun(w, {
    prompt: `Please store ${PROMPT}.`,
    toolCalls: [
      { name: 'write_file', args: { path: 'notes.txt', content: ARGUMENT } },
      { name: 'read_file', args: { path: 'secret.txt' } },
    ],
  })
  const plan = await w.runtime.plan({ sessionId: source.sessionId, runId: source.runId })
  w.script([{ toolCall: { name: 'read_file', args: { path: 'secret.txt' } } }, { text: `Stored: ${ANSWER}` }])
  const executed = await w.runtime.execute(plan)
  const replanned = await w.runtime.plan({ sessionId: source.sessionId, runId: source.runId })
  const stale = await w.runtime.execute(plan)
  const listed = await w.stores.runs.list(source.sessionId)()
  const runs = E.isRight(listed) ? listed.right : []
  const written = []
  for (const entry of runs) {
    written.push({ entry, rows: await w.ledger(source.sessionId, entry.runId) })
  }
  const roots = [await realpath(w.root), w.root]
  let text = JSON.stringify({ source, plan, executed, replanned, stale, written })
  for (const root of roots) text = text.replaceAll(root, '<root>')
  text = text.replace(/fs:\d+:\d+:/g, 'fs:<dev>:<ino>:')
  return { w, text }
}

describe('lifecycle events', () => {
  describe('when a turn and its continuation handle prompts, tool arguments and tool results', () => {
    it('never carry any of them', async () => {
      const { w, text } = await scenario(undefined)

      // The sentinels did flow through the runtime (the test would otherwise prove nothing)…
      for (const sentinel of SENTINELS) expect(text).toContain(sentinel)
      // …and every event type was seen.
      expect(new Set(w.lifecycle.map((e) => e.type))).toEqual(
        new Set(['plan_approved', 'plan_parked', 'execution_started', 'execution_completed', 'execution_failed']),
      )
      const emitted = JSON.stringify(w.lifecycle)
      for (const sentinel of SENTINELS) expect(emitted).not.toContain(sentinel)
      for (const event of w.lifecycle) {
        const allowed = ['type', 'sessionId', 'sourceRunId', 'targetRunId', 'rejectionReasons', 'errorClass']
        expect(Object.keys(event).every((k) => allowed.includes(k))).toBe(true)
      }
    })
  })

  describe('when the sink throws or rejects', () => {
    it('changes nothing the runtime answers or writes', async () => {
      const throwing: LifecycleSink = {
        emit: () => {
          throw new Error('sink down')
        },
      }
      const rejecting: LifecycleSink = { emit: () => Promise.reject(new Error('sink down')) }

      const none = await scenario(null)
      const withThrowing = await scenario(throwing)
      const withRejecting = await scenario(rejecting)

      expect(JSON.parse(none.text)).toMatchObject({ executed: { _tag: 'Finished', status: 'completed' } })
      expect(withThrowing.text).toBe(none.text)
      expect(withRejecting.text).toBe(none.text)
      expect(none.w.lifecycle).toEqual([])
      expect(withThrowing.w.lifecycle.length).toBeGreaterThan(0)
    })
  })
})
