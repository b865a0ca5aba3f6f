/**
 * One run's writer: stamps rows with the run's identity, appends them through the store, keeps the
 * header in step, and accepts exactly one terminal event — anything that arrives after it is
 * drained, never written.
 */
import * as E from 'fp-ts/lib/Either.js'
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
import { type StorePorts, type StoreError, describeStoreError } from '@maka/stores'
import type { RunObserver } from './RuntimeDeps.js'

/**
 * A store write failed inside a run; carries the typed store error.
 * @category errors
 */
export class RunWriteError extends Error {
  override readonly name = 'RunWriteError'
  constructor(
    readonly operation: string,
    readonly storeError: StoreError,
  ) {
    super(`${operation} failed: ${describeStoreError(storeError)}`)
  }
}

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
  stamp(): RowStamp
  append(fields: RowFields, options?: { readonly durable?: boolean }): Promise<RuntimeEvent | null>
  appendRow(row: RuntimeEvent, options?: { readonly durable?: boolean }): Promise<RuntimeEvent | null>
  setStatus(status: RunStatus, extra?: Partial<AgentRun>, options?: { readonly durable?: boolean }): Promise<void>
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

const unwrap = async <A>(operation: string, task: () => Promise<E.Either<StoreError, A>>): Promise<A> => {
  const result = await task()
  if (E.isLeft(result)) throw new RunWriteError(operation, result.left)
  return result.right
}

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

  const appendRow = async (row: RuntimeEvent, options: { readonly durable?: boolean } = {}) => {
    // One accepted terminal event per invocation: late rows are drained, not written.
    if (terminated) return null
    await unwrap('append', deps.stores.events.append(sessionId, runId, row, { durable: options.durable === true }))
    rows += 1
    committed.push(row)
    if (isTerminalEvent(row)) terminated = true
    notifyObserver(() => deps.observer?.onEvent?.(row))
    return row
  }

  return {
    header: () => header,
    committed: () => committed,
    terminated: () => terminated,
    stamp,
    appendRow,
    append: (fields, options) => {
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
      return appendRow(row, options)
    },
    setStatus: async (status, extra = {}, options = {}) => {
      const next: AgentRun = {
        ...header,
        ...extra,
        status,
        updatedAt: makeIsoTimestampUnsafe(deps.clock().toISOString()),
      }
      await unwrap('update header', deps.stores.runs.update(next, { durable: options.durable === true }))
      header = next
    },
  }
}
