/**
 * Builders for the read model's tests: run headers through the real AgentRun codec, so a fixture can
 * never be a shape the store would reject, and the ledger read a store reports for given rows.
 */
import { type AgentRun, type RuntimeEvent, decodeAgentRun } from '@maka/events'
import type { LedgerSnapshot } from '@maka/stores'

export const CWD = '/work/project'
export const WORKSPACE = 'fs:64769:1234:/work/project'

/** A valid AgentRun header; `omit` removes optional keys the defaults set. */
export const header = (overrides: Record<string, unknown> = {}, omit: ReadonlyArray<string> = []): AgentRun => {
  const raw: Record<string, unknown> = {
    runId: 'run-1',
    sessionId: 'session-1',
    turnId: 'turn-1',
    invocationId: 'invocation-1',
    status: 'failed',
    cwd: CWD,
    providerId: 'provider-1',
    modelId: 'model-1',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:01:00.000Z',
    workspaceIdentity: WORKSPACE,
    failureClass: 'app_restarted',
    ...overrides,
  }
  for (const key of omit) delete raw[key]
  const decoded = decodeAgentRun(raw)
  if (decoded._tag === 'Left') throw new Error(`bad fixture header: ${decoded.left}`)
  return decoded.right
}

/** A continuation header of `source` pinned at `highWater`. */
export const continuationHeader = (
  ids: { readonly runId: string; readonly invocationId: string; readonly turnId: string },
  source: AgentRun,
  highWater: number,
  overrides: Record<string, unknown> = {},
): AgentRun =>
  header({
    ...ids,
    parentRunId: source.runId,
    parentTurnId: source.turnId,
    continuationSource: {
      sourceInvocationId: source.invocationId,
      sourceRunId: source.runId,
      sourceTurnId: source.turnId,
      sourceRuntimeEventHighWater: highWater,
    },
    ...overrides,
  })

/** The read a store reports for a whole ledger of `events`. */
export const ledgerOf = (
  events: ReadonlyArray<RuntimeEvent>,
  overrides: Partial<LedgerSnapshot> = {},
): LedgerSnapshot => ({
  events,
  highWater: events.length,
  committedBytes: events.reduce((bytes, event) => bytes + Buffer.byteLength(JSON.stringify(event)) + 1, 0),
  tornTail: null,
  problem: null,
  ...overrides,
})
