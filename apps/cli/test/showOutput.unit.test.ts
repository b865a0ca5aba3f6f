/**
 * `maka show`'s streamed output: the JSON is the text `JSON.stringify(…, null, 2)` gives the same
 * value, the lines keep the lineage tree, output waits for a full stream, and a ledger that changed
 * between its reads cuts the output off with its own error.
 */
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import type { AgentRun, SessionRecord } from '@maka/events'
import type { RunOutline, TimelineEntry } from '@maka/sessions'
import { ShowCutOffError } from '../src/ExitCode.js'
import { makeStyle } from '../src/Style.js'
import { writeOutlineJson, writeOutlineLines } from '../src/commands/show.js'
import type { EventSummary } from '../src/eventSummary.js'
import type { SessionOutline } from '../src/sessionCatalog.js'
import { slowSink } from './slowSink.js'

type Entry = TimelineEntry<EventSummary>

const session = { sessionId: 's', cwd: '/w', createdAt: '2026-01-01T00:00:00.000Z' } as SessionRecord
const header = (runId: string, extra: Record<string, unknown> = {}) =>
  ({
    runId,
    sessionId: 's',
    status: 'failed',
    failureClass: 'app_restarted',
    providerId: 'scripted',
    modelId: 'scripted-1',
    createdAt: '2026-01-01T00:00:00.000Z',
    ...extra,
  }) as unknown as AgentRun

const entries = (runId: string, n: number): ReadonlyArray<Entry> =>
  Array.from({ length: n }, (_, i) => ({
    index: i + 1,
    eventId: `${runId}-e${i + 1}`,
    role: i % 2 === 0 ? 'model' : 'tool',
    kind: i % 2 === 0 ? 'function_call' : 'function_response',
    text: i === 1 ? 'a "quoted"\tline, ünïcode' : `row ${i}`,
    toolName: 'list_dir',
    toolCallId: `call-${Math.floor(i / 2)}`,
    operationStatus: 'succeeded',
  }))

const runs: ReadonlyArray<RunOutline> = [
  {
    runId: 'r1',
    kind: 'turn',
    parentRunId: null,
    children: ['r2'],
    header: header('r1'),
    highWater: 300,
    tornTail: true,
  },
  {
    runId: 'r2',
    kind: 'continuation',
    parentRunId: 'r1',
    children: [],
    header: header('r2', { status: 'completed', failureClass: undefined }),
    highWater: 0,
    tornTail: false,
  },
  {
    runId: 'r3',
    kind: 'unreadable',
    parentRunId: null,
    children: [],
    header: null,
    headerError: 'Malformed',
    highWater: null,
    tornTail: false,
  },
  {
    runId: 'r4',
    kind: 'turn',
    parentRunId: null,
    children: [],
    header: header('r4'),
    highWater: 2,
    ledgerProblem: 'unreadable at line 3',
    tornTail: false,
  },
]
const timelines = new Map<string, ReadonlyArray<Entry>>([
  ['r1', entries('r1', 300)],
  ['r4', entries('r4', 2)],
])

// An outline over fixed timelines, handed over in batches of 64 as a second read does.
const outlineOf = (changed: ReadonlySet<string> = new Set()): SessionOutline => ({
  session,
  roots: ['r1', 'r3', 'r4'],
  runs,
  timeline: async (runId, onEntries) => {
    const all = timelines.get(runId) ?? []
    for (let at = 0; at < all.length; at += 64) {
      if (changed.has(runId) && at >= 128) return E.left(`run ${runId} changed`)
      await onEntries(all.slice(at, at + 64))
    }
    return E.right(undefined)
  },
})

const whole = {
  session,
  roots: ['r1', 'r3', 'r4'],
  runs: runs.map((run) => ({ ...run, timeline: timelines.get(run.runId) ?? [] })),
}

describe('writeOutlineJson', () => {
  it('prints the text JSON.stringify gives the whole session with an indent of 2', async () => {
    const sink = slowSink(Number.POSITIVE_INFINITY)
    await writeOutlineJson(sink, outlineOf())
    expect(sink.chunks.join('')).toBe(`${JSON.stringify(whole, null, 2)}\n`)
    expect(sink.chunks.length).toBeGreaterThan(1)
  })

  it('writes nothing more while the stream is full, and finishes once it drains', async () => {
    const sink = slowSink(1)
    let done = false
    const writing = writeOutlineJson(sink, outlineOf()).then(() => {
      done = true
    })
    for (let i = 0; i < 1000 && !done; i += 1) {
      await new Promise((resolve) => setImmediate(resolve))
      if (sink.waiting) sink.drain()
    }
    await writing
    expect(JSON.parse(sink.chunks.join(''))).toEqual(JSON.parse(JSON.stringify(whole)))
  })

  it('stops with ShowCutOffError when a ledger changed between its reads', async () => {
    const sink = slowSink(Number.POSITIVE_INFINITY)
    await expect(writeOutlineJson(sink, outlineOf(new Set(['r1'])))).rejects.toBeInstanceOf(ShowCutOffError)
  })
})

describe('writeOutlineLines', () => {
  it('prints each run under its parent, its timeline, then what the first read found', async () => {
    const sink = slowSink(Number.POSITIVE_INFINITY)
    await writeOutlineLines(sink, outlineOf(), makeStyle(false))
    const lines = sink.chunks.join('').split('\n')
    expect(lines[0]).toBe('session s 2026-01-01T00:00:00.000Z /w')
    expect(lines[1]).toMatch(/^ {2}● r1 turn failed \(app_restarted\) 300 rows, scripted\/scripted-1/)
    expect(lines[2]).toBe('       1. model  function_call       row 0 [succeeded]')
    expect(lines[3]).toBe('       2. tool   function_response   a "quoted"\tline, ünïcode [succeeded]')
    expect(lines[302]).toBe('          torn last row (never committed, ignored)')
    expect(lines[303]).toMatch(/^ {4}└─ r2 continuation completed 0 rows/)
    expect(lines[304]).toBe('  ● r3 unreadable header (Malformed)')
    expect(lines[305]).toMatch(/^ {2}● r4 turn failed \(app_restarted\) 2 rows/)
    expect(lines.slice(306)).toEqual([
      '       1. model  function_call       row 0 [succeeded]',
      '       2. tool   function_response   a "quoted"\tline, ünïcode [succeeded]',
      '          ledger problem: unreadable at line 3',
      '',
    ])
  })

  it('stops with ShowCutOffError when a ledger changed between its reads', async () => {
    const sink = slowSink(Number.POSITIVE_INFINITY)
    await expect(writeOutlineLines(sink, outlineOf(new Set(['r1'])), makeStyle(false))).rejects.toBeInstanceOf(
      ShowCutOffError,
    )
  })
})
