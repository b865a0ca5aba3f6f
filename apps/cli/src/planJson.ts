/**
 * The JSON a command prints when its output holds a plan (decisions.md, "the plan JSON carries the
 * history once"). A continuation's `runtimeContext` is printed in full, one compact event per line,
 * and its `sourceRuntimeContext` — always the tail of `runtimeContext` — as a reference into it:
 * `{ runtimeContextOffset, count }`, the events `runtimeContext[offset .. offset + count)`.
 *
 * The output is written a chunk at a time and waits for the stream to drain, so a million-event
 * history never becomes one string (V8 caps a string at ~512 MiB) and memory stays at one chunk.
 */
import type { RuntimeEvent } from '@maka/events'

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
export interface JsonSink {
  write(chunk: string): boolean
  once(event: 'drain', listener: () => void): unknown
}

interface ContinuationLike {
  readonly runtimeContext: ReadonlyArray<RuntimeEvent>
  readonly sourceRuntimeContext: ReadonlyArray<RuntimeEvent>
}

const isContinuation = (value: unknown): value is ContinuationLike =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as Partial<ContinuationLike>).runtimeContext) &&
  Array.isArray((value as Partial<ContinuationLike>).sourceRuntimeContext)

// Markers that cannot occur in JSON text (a raw NUL is always escaped by JSON.stringify).
const HISTORY = '\u0000history\u0000'
const REFERENCE = '\u0000reference\u0000'
const CHUNK_CHARS = 1 << 16

const sourceOffset = (c: ContinuationLike): number => {
  const offset = c.runtimeContext.length - c.sourceRuntimeContext.length
  // The planner builds runtimeContext as the ancestors' segments followed by the source's own.
  const isTail = offset >= 0 && c.sourceRuntimeContext.every((event, i) => c.runtimeContext[offset + i] === event)
  if (!isTail) throw new Error('sourceRuntimeContext is not the tail of runtimeContext')
  return offset
}

/**
 * Writes `value` as indented JSON followed by a newline, streaming every continuation's history.
 * @category constructors
 */
export const writePlanJson = async (sink: JsonSink, value: unknown): Promise<void> => {
  const continuations: Array<ContinuationLike> = []
  // The skeleton is small: each history is a marker, filled in while writing.
  const skeleton = JSON.stringify(
    value,
    (_key, v: unknown) => {
      if (!isContinuation(v)) return v
      continuations.push(v)
      return { ...v, runtimeContext: HISTORY, sourceRuntimeContext: REFERENCE }
    },
    2,
  )
  let pending = ''
  const flush = async () => {
    if (pending.length === 0) return
    const chunk = pending
    pending = ''
    if (!sink.write(chunk)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()))
  }
  const emit = async (text: string) => {
    pending += text
    if (pending.length >= CHUNK_CHARS) await flush()
  }

  let rest = skeleton
  for (const c of continuations) {
    const at = rest.indexOf(JSON.stringify(HISTORY))
    const lineStart = rest.lastIndexOf('\n', at) + 1
    const indent = ' '.repeat(rest.slice(lineStart).search(/\S/))
    await emit(rest.slice(0, at))
    const offset = sourceOffset(c)
    const events = c.runtimeContext
    if (events.length === 0) await emit('[]')
    else {
      await emit('[\n')
      for (let i = 0; i < events.length; i += 1) {
        const line = JSON.stringify(events[i])
        await emit(`${indent}  ${line}${i === events.length - 1 ? '\n' : ',\n'}`)
      }
      await emit(`${indent}]`)
    }
    rest = rest.slice(at + JSON.stringify(HISTORY).length)
    const reference: SourceContextReference = {
      runtimeContextOffset: offset,
      count: c.sourceRuntimeContext.length,
    }
    const marker = rest.indexOf(JSON.stringify(REFERENCE))
    // The reference is filled in once the history is written, so it must come after it.
    if (marker === -1) throw new Error('sourceRuntimeContext must follow runtimeContext')
    const referenceJson = JSON.stringify(reference, null, 2).replace(/\n/g, `\n${indent}`)
    rest = `${rest.slice(0, marker)}${referenceJson}${rest.slice(marker + JSON.stringify(REFERENCE).length)}`
  }
  await emit(`${rest}\n`)
  await flush()
}
