/**
 * The session outline (`@maka/sessions`) on real files the executor wrote: each ledger folded once, a run's timeline streamed from a
 * second read that hands over what the batch timeline of the same rows holds, and refuses rows that
 * are no longer the ones folded.
 */
import { appendFile, readFile, writeFile } from 'node:fs/promises'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { AgentRun, RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { type SessionOutline, type TimelineEntry, ledgerTimeline, loadSessionOutline } from '@maka/sessions'
import { type World, trackWorlds } from './support/world.js'

const world = trackWorlds()

// A host's narration: the content kind, and the call a tool row belongs to.
type Summary = { readonly kind: string; readonly toolCallId?: string }
const summarize =
  () =>
  (event: RuntimeEvent): Summary => ({
    kind: event.content?.kind ?? 'none',
    ...(event.content?.kind === 'function_call' || event.content?.kind === 'function_response'
      ? { toolCallId: event.content.id }
      : {}),
  })

// A run of `calls` completed tool calls and a last one with no response, its ledger written whole:
// long enough that the second read hands it over in many batches.
const givenLongRun = async (w: World, calls: number) => {
  const turn = await w.runtime.runTurn({ cwd: w.workspace, prompt: 'hello' })
  if (turn._tag !== 'Finished') throw new Error(JSON.stringify(turn))
  const base = await w.header(turn.sessionId, turn.runId)
  const runId = 'run-long'
  const identity = { sessionId: base.sessionId, invocationId: 'inv-long', runId, turnId: 'turn-long' }
  const { completedAt: _c, failureClass: _f, ...plain } = base
  expect(E.isRight(await w.stores.runs.create({ ...plain, ...identity, status: 'running' } as AgentRun)())).toBe(true)
  const b = makeLedgerBuilderUnsafe(identity)
  const rows: Array<RuntimeEvent> = [b.userText('go')]
  for (let i = 0; i < calls; i += 1) {
    rows.push(b.functionCall(`call-${i}`, 'list_dir', { path: `dir-${i}`.padEnd(200, '.') }))
    rows.push(b.functionResponse(`call-${i}`, 'list_dir', { entries: [] }))
  }
  rows.push(b.functionCall('call-open', 'shell', { command: 'make' }))
  await writeFile(w.ledgerPathOf(base.sessionId, runId), rows.map((row) => `${JSON.stringify(row)}\n`).join(''))
  const record = await w.stores.sessions.read(base.sessionId)()
  if (E.isLeft(record)) throw new Error('no session record')
  return { sessionId: base.sessionId, runId, rows, record: record.right, firstRunId: base.runId }
}

const streamed = async (outline: SessionOutline<Summary>, runId: string) => {
  const entries: Array<TimelineEntry<Summary>> = []
  let batches = 0
  const result = await outline.timeline(runId, (batch) => {
    batches += 1
    entries.push(...batch)
  })
  return { result, entries, batches }
}

describe('loadSessionOutline', () => {
  it('streams, batch by batch, the timeline the whole ledger gives, with each operation status', async () => {
    const w = await world()
    const { runId, rows, record, firstRunId } = await givenLongRun(w, 300)
    const outline = await loadSessionOutline(w.stores, record, summarize)
    if (E.isLeft(outline)) throw new Error(outline.left)
    expect(outline.right.runs.map((run) => [run.runId, run.highWater, run.tornTail])).toEqual([
      [firstRunId, expect.any(Number), false],
      [runId, rows.length, false],
    ])
    const { result, entries, batches } = await streamed(outline.right, runId)
    expect(result).toEqual(E.right(undefined))
    expect(batches).toBeGreaterThan(1)
    expect(entries).toEqual(ledgerTimeline(rows, summarize()))
    expect(entries.at(-1)).toMatchObject({ toolCallId: 'call-open', operationStatus: 'indeterminate' })
    expect(entries[1]).toMatchObject({ toolCallId: 'call-0', operationStatus: 'succeeded' })
  })

  it('counts a torn last row out, and streams rows appended after the first read no further', async () => {
    const w = await world()
    const { sessionId, runId, rows, record } = await givenLongRun(w, 20)
    await appendFile(w.ledgerPathOf(sessionId, runId), '{"torn":')
    const outline = await loadSessionOutline(w.stores, record, summarize)
    if (E.isLeft(outline)) throw new Error(outline.left)
    expect(outline.right.runs.find((run) => run.runId === runId)).toMatchObject({
      highWater: rows.length,
      tornTail: true,
    })
    expect(outline.right.runs.find((run) => run.runId === runId)).not.toHaveProperty('ledgerProblem')
    const { result, entries } = await streamed(outline.right, runId)
    expect(result).toEqual(E.right(undefined))
    expect(entries).toHaveLength(rows.length)
  })

  it('says so when the ledger no longer holds the rows it folded', async () => {
    const w = await world()
    const { sessionId, runId, record } = await givenLongRun(w, 300)
    const outline = await loadSessionOutline(w.stores, record, summarize)
    if (E.isLeft(outline)) throw new Error(outline.left)
    const path = w.ledgerPathOf(sessionId, runId)
    const text = await readFile(path, 'utf8')
    // The same length, one byte of a late row changed: only the digest can tell.
    const at = text.lastIndexOf('dir-29')
    await writeFile(path, `${text.slice(0, at)}dir-92${text.slice(at + 6)}`)
    const { result } = await streamed(outline.right, runId)
    expect(E.isLeft(result)).toBe(true)
  })

  it('outlines a run whose header cannot be read, with no ledger and no entry', async () => {
    const w = await world()
    const { sessionId, runId, record } = await givenLongRun(w, 1)
    await writeFile(w.headerPathOf(sessionId, runId), '{"not a header"')
    const outline = await loadSessionOutline(w.stores, record, summarize)
    if (E.isLeft(outline)) throw new Error(outline.left)
    expect(outline.right.runs.find((run) => run.runId === runId)).toMatchObject({
      header: null,
      headerError: expect.any(String),
      highWater: null,
      kind: 'unreadable',
    })
    expect(await streamed(outline.right, runId)).toMatchObject({ result: E.right(undefined), entries: [] })
  })
})
