/**
 * Text written a chunk at a time, waiting for the stream to drain: a long output (a million-event
 * history, a million-row timeline) never becomes one string, and memory stays at one chunk.
 */

/**
 * The stream the text goes to (`process.stdout` in the CLI).
 * @category models
 */
export interface TextSink {
  write(chunk: string): boolean
  once(event: 'drain', listener: () => void): unknown
}

/**
 * Collects text and writes it once a chunk is full (`flush` writes the rest).
 * @category models
 */
export interface ChunkedWriter {
  readonly emit: (text: string) => Promise<void>
  readonly flush: () => Promise<void>
}

// The text waiting for a write lives through young collections like a replay's batch does
// (readLedgerFile.ts): kept small, it does not make V8 grow its young generation.
const CHUNK_CHARS = 1 << 14

/**
 * A writer over `sink`.
 * @category constructors
 */
export const makeChunkedWriter = (sink: TextSink): ChunkedWriter => {
  let pending = ''
  const flush = async () => {
    if (pending.length === 0) return
    const chunk = pending
    pending = ''
    if (!sink.write(chunk)) await new Promise<void>((resolve) => sink.once('drain', () => resolve()))
  }
  return {
    emit: async (text) => {
      pending += text
      if (pending.length >= CHUNK_CHARS) await flush()
    },
    flush,
  }
}
