/**
 * The JSON a command prints when its output holds a plan (decisions.md, "the plan JSON carries the
 * history once"). A continuation's `runtimeContext` is printed in full, compact, 64 events a line,
 * and its `sourceRuntimeContext` — always the tail of `runtimeContext` — as a reference into it:
 * `{ runtimeContextOffset, count }`, the events `runtimeContext[offset .. offset + count)`.
 *
 * The output is written a chunk at a time (`chunkedOutput.ts`), so a million-event history never
 * becomes one string (V8 caps a string at ~512 MiB).
 */
import type { RuntimeEvent } from '@maka/events'
import type { PlanOutline } from '@maka/executor'
import type { ContinuationOutline } from '@maka/planner'
import * as E from 'fp-ts/lib/Either.js'
import { type TextSink, makeChunkedWriter } from './chunkedOutput.js'
import { HistoryChangedError } from './ExitCode.js'

/**
 * Where `sourceRuntimeContext` sits inside the printed `runtimeContext`.
 * @category models
 */
export interface SourceContextReference {
  /** Index in `runtimeContext` of the segment's first event. */
  readonly runtimeContextOffset: number
  readonly count: number
}

/**
 * The stream the JSON goes to (`process.stdout` in the CLI).
 * @category models
 */
export type JsonSink = TextSink

interface ContinuationLike {
  readonly runtimeContext: ReadonlyArray<RuntimeEvent>
  readonly sourceRuntimeContext: ReadonlyArray<RuntimeEvent>
}

const isContinuation = (value: unknown): value is ContinuationLike =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as Partial<ContinuationLike>).runtimeContext) &&
  Array.isArray((value as Partial<ContinuationLike>).sourceRuntimeContext)

// A marker that cannot occur in JSON text (a raw NUL is always escaped by JSON.stringify).
const marker = (n: number): string => JSON.stringify(`\u0000stream ${n}\u0000`)
const EVENTS_PER_LINE = 64

// The planner builds runtimeContext as the ancestors' segments followed by the source's own, so the
// source segment is its tail; should it ever not be, it is printed in full instead of referenced.
const tailReference = (c: ContinuationLike): SourceContextReference | null => {
  const offset = c.runtimeContext.length - c.sourceRuntimeContext.length
  if (offset < 0) return null
  for (let i = 0; i < c.sourceRuntimeContext.length; i += 1) {
    const own = c.sourceRuntimeContext[i]
    const there = c.runtimeContext[offset + i]
    if (own !== there && (own?.runId !== there?.runId || own?.id !== there?.id)) return null
  }
  return { runtimeContextOffset: offset, count: c.sourceRuntimeContext.length }
}

/**
 * How the JSON is laid out.
 * @category models
 */
export interface PlanJsonLayout {
  /** One line, no indentation: an object of a newline-delimited stream (`resume --json`). */
  readonly compact?: boolean
}

/**
 * Events to print in place of a marker: how many, and a pass that hands them over in order.
 * @category models
 */
interface EventStream {
  readonly count: number
  readonly each: (onEvents: (events: ReadonlyArray<RuntimeEvent>) => Promise<void>) => Promise<void>
}

const arrayStream = (events: ReadonlyArray<RuntimeEvent>): EventStream => ({
  count: events.length,
  each: (onEvents) => onEvents(events),
})

const isOutline = (value: unknown): value is ContinuationOutline =>
  typeof value === 'object' && value !== null && Array.isArray((value as Partial<ContinuationOutline>).replay)

// The skeleton's text with each stream's events printed in place of its marker, a chunk at a time.
const writeSkeleton = async (
  sink: JsonSink,
  skeleton: string,
  streams: ReadonlyArray<EventStream>,
  compact: boolean,
): Promise<void> => {
  const { emit, flush } = makeChunkedWriter(sink)

  let rest = skeleton
  for (const [n, stream] of streams.entries()) {
    const at = rest.indexOf(marker(n))
    const lineStart = rest.lastIndexOf('\n', at) + 1
    const indent = compact ? '' : ' '.repeat(rest.slice(lineStart).search(/\S/))
    const itemIndent = compact ? '' : `${indent}  `
    const newline = compact ? '' : '\n'
    await emit(rest.slice(0, at))
    if (stream.count === 0) await emit('[]')
    else {
      await emit(`[${newline}`)
      // Events are stringified a line of EVENTS_PER_LINE at a time: one JSON.stringify per event costs
      // a quarter more, and an await per event ~0.2 s per million; only a full chunk waits.
      let printed = 0
      let line: Array<RuntimeEvent> = []
      const printLine = async () => {
        printed += line.length
        const text = JSON.stringify(line).slice(1, -1)
        line = []
        await emit(`${itemIndent}${text}${printed >= stream.count ? newline : `,${newline}`}`)
      }
      await stream.each(async (events) => {
        for (const event of events) {
          line.push(event)
          if (line.length === EVENTS_PER_LINE) await printLine()
        }
      })
      if (line.length > 0) await printLine()
      if (printed !== stream.count) throw new HistoryChangedError('the replay history holds other events than planned')
      await emit(`${indent}]`)
    }
    rest = rest.slice(at + marker(n).length)
  }
  await emit(`${rest}\n`)
  await flush()
}

/**
 * Writes `value` as JSON followed by a newline (indented unless `compact`), streaming every
 * continuation's history.
 * @category constructors
 */
export const writePlanJson = async (sink: JsonSink, value: unknown, layout: PlanJsonLayout = {}): Promise<void> => {
  const compact = layout.compact === true
  const streams: Array<EventStream> = []
  const stream = (events: ReadonlyArray<RuntimeEvent>): string => {
    streams.push(arrayStream(events))
    return `\u0000stream ${streams.length - 1}\u0000`
  }
  // The skeleton is small: each history is a marker, filled in while writing.
  const skeleton = JSON.stringify(
    value,
    (_key, v: unknown) => {
      if (!isContinuation(v)) return v
      const reference = tailReference(v)
      return {
        ...v,
        runtimeContext: stream(v.runtimeContext),
        sourceRuntimeContext: reference ?? stream(v.sourceRuntimeContext),
      }
    },
    compact ? undefined : 2,
  )
  await writeSkeleton(sink, skeleton, streams, compact)
}

/**
 * Writes an outlined plan as {@link writePlanJson} writes the same plan whole — the same text —
 * reading each segment of the history again as it prints it. Rejects with
 * {@link HistoryChangedError} when a segment cannot be read again as planned; the output is then
 * cut off before its end.
 * @category constructors
 */
export const writeOutlinedPlanJson = async (
  sink: JsonSink,
  outline: PlanOutline,
  layout: PlanJsonLayout = {},
): Promise<void> => {
  const compact = layout.compact === true
  const streams: Array<EventStream> = []
  const skeleton = JSON.stringify(
    outline.plan,
    (_key, v: unknown) => {
      if (!isOutline(v)) return v
      const { replay, safetySnapshot, ...head } = v
      const count = replay.reduce((sum, segment) => sum + segment.count, 0)
      const own = replay.at(-1)?.count ?? 0
      streams.push({
        count,
        each: async (onEvents) => {
          for (const segment of replay) {
            const read = await outline.replay(segment, onEvents)
            if (E.isLeft(read)) throw new HistoryChangedError(read.left.message)
          }
        },
      })
      const reference: SourceContextReference = { runtimeContextOffset: count - own, count: own }
      return {
        ...head,
        runtimeContext: `\u0000stream ${streams.length - 1}\u0000`,
        sourceRuntimeContext: reference,
        safetySnapshot,
      }
    },
    compact ? undefined : 2,
  )
  await writeSkeleton(sink, skeleton, streams, compact)
}
