/**
 * The host's world reads for the open operations of a chain (Phase 2): the mode each call's tool
 * gives its args today, and — when that mode is the one the call was dispatched under — a
 * `reconcile` tool's read-only probe or a `reattach` command's observation. Reads only: a probe is
 * the tool's own read-only check, limited in time, and nothing here writes.
 */
import type { AgentRun } from '@maka/events'
import type { ObservedOperation, OperationToObserve } from '@maka/planner'
import { type Tool, recoveryModeOf, runProbe } from '@maka/tools'
import type * as TE from 'fp-ts/lib/TaskEither.js'

/**
 * How a `reattach` command is observed: ended, still running, or gone. Absent: such an operation
 * gets no observation and parks.
 * @category models
 */
export type ReattachObserver = (input: {
  readonly sessionId: string
  readonly operationId: string
}) => Promise<'exited' | 'running' | 'lost'>

/**
 * Observes one operation.
 * @category constructors
 */
export const observeOperation = async (
  tools: ReadonlyArray<Tool>,
  context: { readonly sessionId: string; readonly cwd: string; readonly reattach?: ReattachObserver | undefined },
  operation: OperationToObserve,
): Promise<ObservedOperation> => {
  const tool = tools.find((t) => t.name === operation.toolName)
  if (tool === undefined) return { operationId: operation.operationId, currentMode: null }
  const currentMode = recoveryModeOf(tool, operation.args)
  if (currentMode !== operation.recordedMode) return { operationId: operation.operationId, currentMode }
  if (currentMode === 'reconcile' && operation.reconcileBasis !== null) {
    const probed = await runProbe(
      tool,
      operation.args,
      { sessionId: context.sessionId, cwd: context.cwd },
      operation.reconcileBasis,
    )
    return { operationId: operation.operationId, currentMode, probe: probed.verdict }
  }
  if (currentMode === 'reattach' && context.reattach !== undefined) {
    const observation = await context.reattach({ sessionId: context.sessionId, operationId: operation.operationId })
    return { operationId: operation.operationId, currentMode, observation }
  }
  return { operationId: operation.operationId, currentMode }
}

/**
 * The planner's `observeOperations` over this host's tools: one operation after another, in the
 * chain's order, each probe in the source run's recorded cwd (gate 6 made it the current one).
 * @category constructors
 */
export const makeObserveOperations =
  (tools: ReadonlyArray<Tool>, reattach?: ReattachObserver) =>
  (input: {
    readonly sessionId: string
    readonly sourceRun: AgentRun
    readonly operations: ReadonlyArray<OperationToObserve>
  }): TE.TaskEither<never, ReadonlyArray<ObservedOperation>> =>
  async () => {
    const observed: Array<ObservedOperation> = []
    for (const operation of input.operations) {
      observed.push(
        await observeOperation(tools, { sessionId: input.sessionId, cwd: input.sourceRun.cwd, reattach }, operation),
      )
    }
    return { _tag: 'Right', right: observed }
  }
