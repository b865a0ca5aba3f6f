/**
 * The on-disk layout of a data directory (docs/contract.md §1). These functions only join paths: they
 * do not validate ids, so every store checks ids with `isSafeId` before it calls one of them.
 */
import { join } from 'node:path'

/**
 * `<dataDir>/sessions`.
 * @category constructors
 */
export const sessionsDir = (dataDir: string): string => join(dataDir, 'sessions')

/**
 * `<dataDir>/sessions/<sessionId>`.
 * @category constructors
 */
export const sessionDir = (dataDir: string, sessionId: string): string => join(sessionsDir(dataDir), sessionId)

/**
 * `sessions/<sessionId>/session.json`.
 * @category constructors
 */
export const sessionRecordPath = (dataDir: string, sessionId: string): string =>
  join(sessionDir(dataDir, sessionId), 'session.json')

/**
 * `sessions/<sessionId>/runs`.
 * @category constructors
 */
export const runsDir = (dataDir: string, sessionId: string): string => join(sessionDir(dataDir, sessionId), 'runs')

/**
 * `sessions/<sessionId>/runs/<runId>`.
 * @category constructors
 */
export const runDir = (dataDir: string, sessionId: string, runId: string): string =>
  join(runsDir(dataDir, sessionId), runId)

/**
 * `sessions/<sessionId>/runs/<runId>/run.json`, the AgentRun header.
 * @category constructors
 */
export const runHeaderPath = (dataDir: string, sessionId: string, runId: string): string =>
  join(runDir(dataDir, sessionId, runId), 'run.json')

/**
 * `sessions/<sessionId>/runs/<runId>/runtime-events.jsonl`, the canonical ledger.
 * @category constructors
 */
export const ledgerPath = (dataDir: string, sessionId: string, runId: string): string =>
  join(runDir(dataDir, sessionId, runId), 'runtime-events.jsonl')

/**
 * `sessions/<sessionId>/shell-runs`.
 * @category constructors
 */
export const shellRunsDir = (dataDir: string, sessionId: string): string =>
  join(sessionDir(dataDir, sessionId), 'shell-runs')

/**
 * `sessions/<sessionId>/shell-runs/<shellRunId>.json`.
 * @category constructors
 */
export const shellRunPath = (dataDir: string, sessionId: string, shellRunId: string): string =>
  join(shellRunsDir(dataDir, sessionId), `${shellRunId}.json`)

/**
 * `sessions/<sessionId>/claims`.
 * @category constructors
 */
export const claimsDir = (dataDir: string, sessionId: string): string => join(sessionDir(dataDir, sessionId), 'claims')

/**
 * The file name of a boundary claim: `<sourceRunId>@<highWater>.json`.
 * @category constructors
 */
export const claimFileName = (sourceRunId: string, highWater: number): string => `${sourceRunId}@${highWater}.json`

/**
 * `sessions/<sessionId>/claims/<sourceRunId>@<highWater>.json`.
 * @category constructors
 */
export const claimPath = (dataDir: string, sessionId: string, sourceRunId: string, highWater: number): string =>
  join(claimsDir(dataDir, sessionId), claimFileName(sourceRunId, highWater))

/**
 * `sessions/<sessionId>/owner.lock`.
 * @category constructors
 */
export const ownerLockPath = (dataDir: string, sessionId: string): string =>
  join(sessionDir(dataDir, sessionId), 'owner.lock')

/**
 * The name every successor file of `owner.lock` starts with.
 * @category constructors
 */
export const OWNER_SUCCESSOR_PREFIX = 'owner.lock.next-'

/**
 * `sessions/<sessionId>/owner.lock.next-<key>`: the successor of the owner whose identity hashes to
 * `key`, created exclusively by the one process that takes that owner's stale lock over.
 * @category constructors
 */
export const ownerSuccessorPath = (dataDir: string, sessionId: string, ownerKey: string): string =>
  join(sessionDir(dataDir, sessionId), `${OWNER_SUCCESSOR_PREFIX}${ownerKey}`)
