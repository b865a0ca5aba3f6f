/**
 * The AgentRun header port: one header per run. Create is exclusive, so two processes can never
 * both create one run; update replaces the header atomically. Every adapter checks a header with
 * `checkRunHeader` before any place is named after it.
 */
import { decodeAgentRun, type AgentRun, type RunId } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { checkIds } from './internal/checkIds.js'
import { invalidRecord, type StoreError } from './StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One `runs/<runId>/` folder: its header, or why it could not be read (never dropped).
 * @category models
 */
export type RunListing =
  { readonly runId: RunId; readonly header: AgentRun } | { readonly runId: RunId; readonly error: StoreError }

/**
 * Options of a header update.
 * @category models
 */
export interface UpdateRunOptions {
  /** fsync the header and its directory before resolving (terminal headers). */
  readonly durable?: boolean | undefined
}

/**
 * The AgentRun headers of every session in a data dir.
 * @category models
 */
export interface AgentRunStore {
  /** Creates the header exclusively (durable); an existing run is `RunAlreadyExists`, left untouched. */
  create(run: AgentRun): TE.TaskEither<StoreError, void>
  /** Reads a header: missing → `NotFound`, bad JSON, shape or identity → `Unreadable`. */
  read(sessionId: string, runId: string): TE.TaskEither<StoreError, AgentRun>
  /** Replaces an existing header atomically. */
  update(run: AgentRun, options?: UpdateRunOptions): TE.TaskEither<StoreError, void>
  /** Lists every run folder of a session, sorted by run id. */
  list(sessionId: string): TE.TaskEither<StoreError, ReadonlyArray<RunListing>>
}

// -------------------------------------------------------------------------------------
// gates
// -------------------------------------------------------------------------------------

/**
 * Checks a header's ids, then its exact shape, before any path is built from it.
 * @category gates
 */
export const checkRunHeader = (run: AgentRun): E.Either<StoreError, AgentRun> => {
  const ids = checkIds(['sessionId', run?.sessionId], ['runId', run?.runId])
  if (E.isLeft(ids)) return ids
  const decoded = decodeAgentRun(run)
  return E.isLeft(decoded) ? E.left(invalidRecord('AgentRun', decoded.left)) : decoded
}
