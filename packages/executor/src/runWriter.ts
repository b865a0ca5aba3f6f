/**
 * One run's writer: stamps rows with the run's identity, appends them through the store, keeps the
 * header in step, and accepts exactly one terminal event — anything that arrives after it is
 * drained, never written.
 */
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import {
  type AgentRun,
  type RowStamp,
  type RunStatus,
  type RuntimeEvent,
  isTerminalEvent,
  makeFiniteNumberUnsafe,
  makeIsoTimestampUnsafe,
  makeNonEmptyStringUnsafe,
} from '@maka/events'
import type { StorePorts, StoreError } from '@maka/stores'
import type { RunObserver } from './RuntimeDeps.js'

/**
 * A store write failed inside a run: the writer's operation and the store's typed error. A value,
 * never thrown.
 * @category errors
 */
export interface RunWriteFailure {
  readonly _tag: 'RunWriteFailed'
  readonly operation: 'append' | 'update header'
  readonly error: StoreError
}

/**
 * Something threw inside a started run instead of failing with a value: a bug, or a crash point
 * that simulates a kill. It reads as a runtime error.
 * @category errors
 */
export interface RunThrew {
  readonly _tag: 'RunThrew'
}

/**
 * A continuation's reissue that a probe chose stopped before its dispatch: the probe, made again
 * right before it, no longer reads `not_applied` (an effect landed after the plan's probe). Nothing
 * was dispatched, and the run stops where a crash would have left it, for recovery and a new plan.
 * @category errors
 */
export interface ReconcileVerdictChanged {
  readonly _tag: 'ReconcileVerdictChanged'
}

/**
 * Why a started run stopped before its terminal writes.
 * @category errors
 */
export type RunStop = RunWriteFailure | RunThrew | ReconcileVerdictChanged

/**
 * Builds a {@link RunWriteFailure}.
 * @category constructors
 */
export const runWriteFailed = (operation: RunWriteFailure['operation'], error: StoreError): RunWriteFailure => ({
  _tag: 'RunWriteFailed',
  operation,
  error,
})

/**
 * The one {@link RunThrew}.
 * @category constructors
 */
export const runThrew: RunThrew = { _tag: 'RunThrew' }

/**
 * The fields of a row a caller chooses; identity, id, time and `partial` are filled in.
 * @category models
 */
export type RowFields = Omit<RuntimeEvent, 'id' | 'sessionId' | 'invocationId' | 'runId' | 'turnId' | 'ts' | 'partial'>

/**
 * Writes one run.
 * @category models
 */
export interface RunWriter {
  readonly header: () => AgentRun
  /** Rows committed by this writer, in order. */
  readonly committed: () => ReadonlyArray<RuntimeEvent>
  readonly terminated: () => boolean
  /** The 1-based row number the next appended row will have. */
  readonly nextRow: () => number
  stamp(): RowStamp
  /** Appends a row (`null`: the run already has its terminal event, the row is drained). */
  append(
    fields: RowFields,
    options?: { readonly durable?: boolean },
  ): TE.TaskEither<RunWriteFailure, RuntimeEvent | null>
  appendRow(
    row: RuntimeEvent,
    options?: { readonly durable?: boolean },
  ): TE.TaskEither<RunWriteFailure, RuntimeEvent | null>
  setStatus(
    status: RunStatus,
    extra?: Partial<AgentRun>,
    options?: { readonly durable?: boolean },
  ): TE.TaskEither<RunWriteFailure, void>
}

/**
 * Calls a host's observer; a throwing observer is a UI bug and must never end a run.
 * @category constructors
 */
export const notifyObserver = (notify: () => void): void => {
  try {
    notify()
  } catch {
    // The ledger, not the UI, is the record of the run.
  }
}

/**
 * The stamp of a run's row number `row` (1-based): ids are positional, so a replay names rows alike.
 * @category constructors
 */
export const rowStamp = (runId: string, row: number, ts: number): RowStamp => ({
  // Never empty by construction. The time is the clock's; a clock that answers NaN is refused by
  // the store's row check on append, as it always was.
  eventId: makeNonEmptyStringUnsafe(`${runId}-e${row}`),
  ts: makeFiniteNumberUnsafe(ts),
})

/**
 * Creates a writer for a run whose header already exists; `rowsBefore` is its ledger length now.
 * @category constructors
 */
export const makeRunWriter = (deps: {
  readonly stores: StorePorts
  readonly header: AgentRun
  readonly rowsBefore: number
  readonly clock: () => Date
  readonly observer?: RunObserver
}): RunWriter => {
  let header = deps.header
  let rows = deps.rowsBefore
  let terminated = false
  const committed: Array<RuntimeEvent> = []
  const { sessionId, runId } = header

  const stamp = (): RowStamp => rowStamp(runId, rows + 1, deps.clock().getTime())

  const appendRow =
    (
      row: RuntimeEvent,
      options: { readonly durable?: boolean } = {},
    ): TE.TaskEither<RunWriteFailure, RuntimeEvent | null> =>
    async () => {
      // One accepted terminal event per invocation: late rows are drained, not written.
      if (terminated) return E.right(null)
      const appended = await deps.stores.events.append(sessionId, runId, row, { durable: options.durable === true })()
      if (E.isLeft(appended)) return E.left(runWriteFailed('append', appended.left))
      rows += 1
      committed.push(row)
      if (isTerminalEvent(row)) terminated = true
      notifyObserver(() => deps.observer?.onEvent?.(row))
      return E.right(row)
    }

  return {
    header: () => header,
    committed: () => committed,
    terminated: () => terminated,
    nextRow: () => rows + 1,
    stamp,
    appendRow,
    append: (fields, options) => () => {
      const s = stamp()
      const row: RuntimeEvent = {
        id: s.eventId,
        sessionId: header.sessionId,
        invocationId: header.invocationId,
        runId: header.runId,
        turnId: header.turnId,
        ts: s.ts,
        partial: false,
        ...fields,
      }
      return appendRow(row, options)()
    },
    setStatus:
      (status, extra = {}, options = {}) =>
      async () => {
        const next: AgentRun = {
          ...header,
          ...extra,
          status,
          updatedAt: makeIsoTimestampUnsafe(deps.clock().toISOString()),
        }
        const updated = await deps.stores.runs.update(next, { durable: options.durable === true })()
        if (E.isLeft(updated)) return E.left(runWriteFailed('update header', updated.left))
        header = next
        return E.right(undefined)
      },
  }
}
