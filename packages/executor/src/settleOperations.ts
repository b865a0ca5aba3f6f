/**
 * A continuation's settlements (Phase 2), written into the new run before any provider call, one
 * entry of the settlement plan after another: a reissue runs the call again through preflight and
 * the journal (another attempt, a new permission question); `settle_applied` records what the
 * probe found; `settle_reattached` records what a command that outlived the crash printed and how
 * it ended. Each ends with one durable response, so the model sees exactly one response per call.
 * The args of a reissue come from the call row revalidation re-read, never from the plan.
 */
import { type SettlementEntry, type SettlementOrigin, makeNonEmptyStringUnsafe } from '@maka/events'
import { findReattachRecord } from '@maka/host-inspector'
import type { OpenOperation } from '@maka/projection'
import type { StorePorts } from '@maka/stores'
import { type ToolOutcome, shellOutcomeOf, shellResultFromFiles, shellRunDirOf } from '@maka/tools'
import * as E from 'fp-ts/lib/Either.js'
import { type LoopInput, runTool } from './agentLoop.js'
import { appendToolResponse, runJournaledCall } from './journaledCall.js'
import type { LifecycleSink } from './RuntimeDeps.js'
import { emitSafely } from './lifecycle.js'
import type { ReconcileVerdictChanged, RunWriteFailure } from './runWriter.js'

/**
 * What the settlements need besides the loop's input.
 * @category models
 */
export interface SettlementInput {
  readonly loop: LoopInput
  readonly stores: StorePorts
  readonly dataDir: string | undefined
  readonly sink: LifecycleSink | undefined
  readonly sourceRunId: string
  /** The open operations as revalidation re-read them, by operation id. */
  readonly operations: ReadonlyMap<string, OpenOperation>
  /** The probes revalidation made again: the verdict and, for `applied`, the output. */
  readonly probes: ReadonlyMap<string, { readonly verdict: string; readonly output?: unknown }>
  /** Makes an operation's probe once more (a probe-chosen reissue, right before its dispatch). */
  readonly probe: (operation: OpenOperation) => Promise<{ readonly verdict: string } | null>
}

const verdictChanged: ReconcileVerdictChanged = { _tag: 'ReconcileVerdictChanged' }

// One durable response that closes an operation without running anything.
const appendSettlement = async (
  loop: LoopInput,
  operation: OpenOperation,
  outcome: ToolOutcome,
  origin: Extract<SettlementOrigin, 'reconcile_applied' | 'reattached'>,
): Promise<E.Either<RunWriteFailure, SettlementOrigin>> => {
  const call = {
    id: makeNonEmptyStringUnsafe(operation.toolCallId),
    name: makeNonEmptyStringUnsafe(operation.toolName),
  }
  const appended = await appendToolResponse(loop.writer, call, outcome, { operationId: operation.operationId, origin })
  if (E.isLeft(appended)) return appended
  await loop.crashPoint('after_settlement_committed')
  return E.right(origin)
}

// The result a reattached command's files give, built as the tool builds it in a normal turn.
const reattachedOutcome = async (input: SettlementInput, operation: OpenOperation): Promise<ToolOutcome> => {
  const sessionId = input.loop.writer.header().sessionId
  const listed = await input.stores.shellRuns.list(sessionId)()
  if (E.isLeft(listed) || input.dataDir === undefined) {
    return { result: { error: 'The command ended, but its output could not be read.' }, isError: true }
  }
  const entries = listed.right.map((entry) => ('shellRun' in entry ? entry.shellRun : entry))
  const record = findReattachRecord(entries, sessionId, operation.operationId)
  if (E.isLeft(record) || record.right === null) {
    return { result: { error: 'The command ended, but its record could not be read.' }, isError: true }
  }
  const dataDir = input.dataDir
  const result = await shellResultFromFiles(shellRunDirOf(dataDir, sessionId, record.right.shellRunId))()
  return E.isLeft(result)
    ? { result: { error: 'The command ended, but its output could not be read.' }, isError: true }
    : shellOutcomeOf(result.right)
}

/**
 * Writes every settlement of the plan, in order. A write the store refused stops the run (recovery
 * closes it, and the next plan counts this adoption). So does a reissue a probe chose whose probe,
 * made again right before its dispatch, no longer reads `not_applied`: it dispatches nothing, and
 * the next plan decides from the fresh verdict.
 * @category constructors
 */
export const performSettlements = async (
  input: SettlementInput,
  entries: ReadonlyArray<SettlementEntry>,
): Promise<E.Either<RunWriteFailure | ReconcileVerdictChanged, void>> => {
  const { loop } = input
  for (const entry of entries) {
    const operation = input.operations.get(entry.operationId)
    // Revalidation compared the open operations with the plan's: a missing one cannot reach here.
    if (operation === undefined) throw new TypeError('settlement of an operation revalidation did not find')
    let settled: E.Either<RunWriteFailure, SettlementOrigin | null>
    switch (entry.action) {
      case 'reissue': {
        const tool = loop.tools.find((t) => t.name === operation.toolName)
        const probeChosen = input.probes.get(operation.operationId)?.verdict === 'not_applied'
        settled = await runJournaledCall(
          loop,
          tool,
          {
            id: makeNonEmptyStringUnsafe(operation.toolCallId),
            name: makeNonEmptyStringUnsafe(operation.toolName),
            args: operation.args,
          },
          {
            operationId: operation.operationId,
            attempt: operation.attempts + 1,
            origin: 'reissue_t2',
            requestId: `perm-${operation.toolCallId}-r${operation.adoptions + 1}`,
            ...(probeChosen
              ? {
                  priorVerdict: 'not_applied' as const,
                  stillNotApplied: async () => (await input.probe(operation))?.verdict === 'not_applied',
                }
              : {}),
            afterResponse: 'after_settlement_committed',
          },
          (found, journal) =>
            runTool(loop, found, { id: makeNonEmptyStringUnsafe(operation.toolCallId), args: operation.args }, journal),
        )
        break
      }
      case 'settle_applied': {
        const output = input.probes.get(operation.operationId)?.output
        settled = await appendSettlement(
          loop,
          operation,
          { result: output ?? null, isError: false },
          'reconcile_applied',
        )
        break
      }
      case 'settle_reattached':
        settled = await appendSettlement(loop, operation, await reattachedOutcome(input, operation), 'reattached')
        break
      case 'adjudicate':
        // Only `maka resolve` writes an adjudication, in a run of its own.
        throw new TypeError('an adjudication in a continuation settlement plan')
    }
    if (E.isLeft(settled)) return settled
    if (settled.right === null) return E.left(verdictChanged)
    emitSafely(input.sink, {
      type: 'operation_settled',
      sessionId: loop.writer.header().sessionId,
      targetRunId: loop.writer.header().runId,
      operationId: operation.operationId,
      action: entry.action,
      recoveryMode: operation.recordedMode,
      settlementOrigin: settled.right,
    })
  }
  return E.right(undefined)
}
