/**
 * A test stream that fills up: output written a chunk at a time must wait for it to drain.
 */
import { EventEmitter } from 'node:events'

/** A stream that accepts `capacity` writes, then reports full until it is drained by hand. */
export const slowSink = (capacity: number) => {
  const emitter = new EventEmitter()
  const chunks: Array<string> = []
  let room = capacity
  let waiting = false
  return {
    chunks,
    get waiting() {
      return waiting
    },
    write(chunk: string) {
      if (waiting) throw new Error('written while the stream was full')
      chunks.push(chunk)
      room -= 1
      waiting = room <= 0
      return !waiting
    },
    once: (event: 'drain', listener: () => void) => emitter.once(event, listener),
    drain() {
      room = capacity
      waiting = false
      emitter.emit('drain')
    },
  }
}
