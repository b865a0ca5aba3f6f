/**
 * Best-effort emission of lifecycle events: the sink is isolated so that a throwing, rejecting or
 * hanging sink can never change what the runtime does.
 */
import type { LifecycleEvent, LifecycleSink } from './RuntimeDeps.js'

/**
 * Emits without awaiting and swallows every failure of the sink.
 * @category constructors
 */
export const emitSafely = (sink: LifecycleSink | undefined, event: LifecycleEvent): void => {
  if (sink === undefined) return
  try {
    const pending = sink.emit(event)
    if (pending !== undefined && typeof pending.catch === 'function') {
      pending.catch(() => undefined)
    }
  } catch {
    // Telemetry is best-effort by contract.
  }
}
