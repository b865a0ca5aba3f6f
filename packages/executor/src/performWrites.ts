/**
 * The performer: carries out decided writes in the order the executor contract fixes, and is the
 * only place that knows that order — claim, then target header (one store operation), then the
 * durable start row, before any provider call; the terminal event before the terminal header.
 * The crash point after each write lets tests kill the process exactly there.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { AgentRun, ContinuationClaim, RunStatus, RuntimeEvent } from '@maka/events'
import type { StorePorts, StoreError } from '@maka/stores'
import type { ContinuationStart } from './decideContinuation.js'
import type { RunTerminal } from './decideTerminal.js'
import type { TurnStart } from './decideTurnStart.js'
import type { CrashPoint } from './RuntimeDeps.js'
import { type RunStop, type RunWriter, runThrew } from './runWriter.js'

/**
 * One durable write, as data.
 * @category models
 */
export type Write =
  /** The boundary claim file, then the target header: both exclusive creates. */
  | { readonly _tag: 'ClaimBoundary'; readonly claim: ContinuationClaim; readonly header: AgentRun }
  | { readonly _tag: 'CreateRun'; readonly header: AgentRun }
  | { readonly _tag: 'AppendRow'; readonly row: RuntimeEvent; readonly durable: boolean }
  | {
      readonly _tag: 'SetStatus'
      readonly status: RunStatus
      readonly fields: Partial<AgentRun>
      readonly durable: boolean
    }

/**
 * A write and the crash point that follows it.
 * @category models
 */
export interface WriteStep {
  readonly write: Write
  readonly after?: CrashPoint
}

/**
 * Why a list of writes stopped. `NotOpened`: the run's header was refused, nothing of it exists.
 * `Interrupted`: the run exists and stays non-terminal until recovery closes it; `failure` is the
 * writer's typed failure (or, for a store adapter that threw instead, `RunThrew`).
 * @category models
 */
export type WriteFailure =
  | { readonly _tag: 'NotOpened'; readonly write: 'ClaimBoundary' | 'CreateRun'; readonly error: StoreError }
  | { readonly _tag: 'Interrupted'; readonly write: 'AppendRow' | 'SetStatus'; readonly failure: RunStop }

/**
 * A normal turn opens with its header, then the durable initial user event, then `running`.
 * @category constructors
 */
export const turnStartWrites = (start: TurnStart): ReadonlyArray<WriteStep> => [
  { write: { _tag: 'CreateRun', header: start.header }, after: 'after_run_created' },
  { write: { _tag: 'AppendRow', row: start.initialUser, durable: true }, after: 'after_initial_user_committed' },
  { write: { _tag: 'SetStatus', status: 'running', fields: {}, durable: false } },
]

/**
 * A continuation opens with the durable claim (claim, then target header), then the durable
 * continuation-start row. `running` follows once the start has been announced.
 * @category constructors
 */
export const continuationStartWrites = (start: ContinuationStart): ReadonlyArray<WriteStep> => [
  { write: { _tag: 'ClaimBoundary', claim: start.claim, header: start.header }, after: 'after_run_created' },
  { write: { _tag: 'AppendRow', row: start.startRow, durable: true }, after: 'after_continuation_start_committed' },
]

/**
 * An adjudication run (`resolve`): the durable claim (claim, then target header), the durable
 * continuation-start row naming the operation, the durable response the person recorded, then the
 * terminal event and header. No model is called in between.
 * @category constructors
 */
export const adjudicationWrites = (adjudication: {
  readonly start: ContinuationStart
  readonly response: RuntimeEvent
  readonly terminal: RunTerminal
}): ReadonlyArray<WriteStep> => [
  ...continuationStartWrites(adjudication.start),
  { write: { _tag: 'AppendRow', row: adjudication.response, durable: true }, after: 'after_adjudication_committed' },
  ...terminalWrites(adjudication.terminal),
]

/**
 * The step that marks a started continuation as running.
 * @category constructors
 */
export const runningWrites: ReadonlyArray<WriteStep> = [
  { write: { _tag: 'SetStatus', status: 'running', fields: {}, durable: false } },
]

/**
 * A run closes with the durable terminal event, then the durable terminal header.
 * @category constructors
 */
export const terminalWrites = (terminal: RunTerminal): ReadonlyArray<WriteStep> => [
  { write: { _tag: 'AppendRow', row: terminal.event, durable: true }, after: 'after_terminal_event_committed' },
  {
    write: { _tag: 'SetStatus', status: terminal.status, fields: terminal.headerFields, durable: true },
    after: 'after_terminal_header_committed',
  },
]

/**
 * Performs steps in order and stops at the first failed write. Rows go through the run's writer,
 * which a header write creates; a throwing crash point is not a write failure and propagates.
 * @category models
 */
export type PerformWrites = (
  steps: ReadonlyArray<WriteStep>,
  writer?: RunWriter,
) => Promise<E.Either<WriteFailure, RunWriter>>

/**
 * The performer over the file stores.
 * @category constructors
 */
export const makePerformWrites =
  (deps: {
    /** Only the two header writes go to the stores directly; rows go through the run's writer. */
    readonly stores: {
      readonly claims: Pick<StorePorts['claims'], 'claimBoundary'>
      readonly runs: Pick<StorePorts['runs'], 'create'>
    }
    readonly newRunWriter: (header: AgentRun) => RunWriter
    readonly crashPoint: (runId: string) => (point: CrashPoint) => Promise<void>
  }): PerformWrites =>
  async (steps, initial) => {
    let writer = initial
    for (const step of steps) {
      const write = step.write
      if (write._tag === 'ClaimBoundary' || write._tag === 'CreateRun') {
        const opened =
          write._tag === 'ClaimBoundary'
            ? await deps.stores.claims.claimBoundary(write.claim, write.header)()
            : await deps.stores.runs.create(write.header)()
        if (E.isLeft(opened)) return E.left({ _tag: 'NotOpened', write: write._tag, error: opened.left })
        writer = deps.newRunWriter(write.header)
      } else {
        if (writer === undefined) throw new Error(`${write._tag} before the run's header was written`)
        let written: E.Either<RunStop, unknown>
        try {
          written =
            write._tag === 'AppendRow'
              ? await writer.appendRow(write.row, { durable: write.durable })()
              : await writer.setStatus(write.status, write.fields, { durable: write.durable })()
        } catch {
          // A store adapter that throws instead of failing with a value: a bug, still an interruption.
          written = E.left(runThrew)
        }
        if (E.isLeft(written)) return E.left({ _tag: 'Interrupted', write: write._tag, failure: written.left })
      }
      if (step.after !== undefined) await deps.crashPoint(writer.header().runId)(step.after)
    }
    if (writer === undefined) throw new Error('no run to perform writes on')
    return E.right(writer)
  }
