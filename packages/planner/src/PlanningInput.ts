/**
 * What the pure planner reads, already loaded: the source header and ledger, the ancestors a
 * continuation chain points to, the runs and claims that may already hold the boundary, and the
 * host facts. The factory fills it from the ports; tests and benchmarks build it directly. A ledger
 * read is the store's own `LedgerSnapshot` (@maka/stores, named as a type only: the planner never
 * loads the shell).
 */
import type { AgentRun, ContinuationClaim } from '@maka/events'
import type { LedgerSnapshot } from '@maka/stores'
import type * as E from 'fp-ts/lib/Either.js'
import type { HostFacts, OperationFacts } from './HostFacts.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * An ancestor run of a continuation chain: its header and its ledger.
 * @category models
 */
export interface AncestorRead {
  readonly header: AgentRun
  readonly ledger: LedgerSnapshot
  /** Lowercase hex SHA-256 of its rows up to the pin its child recorded, when read (exit 8a). */
  readonly pinDigest?: string | undefined
}

/**
 * Why an ancestor could not be loaded: its header (`run`) or its ledger failed, and how.
 * @category models
 */
export interface AncestorUnavailable {
  readonly stage: 'run' | 'ledger'
  readonly cause: string
}

/**
 * Finds an ancestor by run id, purely.
 * @category models
 */
export type AncestorLookup = (runId: string) => E.Either<AncestorUnavailable, AncestorRead>

/**
 * The ancestors: a pure lookup, or a list of already loaded runs (one not listed is unreadable).
 * @category models
 */
export type Ancestors = AncestorLookup | ReadonlyArray<AncestorRead>

/**
 * The session's runs and claims that may already hold the boundary, or why they could not be listed.
 * @category models
 */
export type BoundaryHolders =
  | { readonly runs: ReadonlyArray<AgentRun>; readonly claims: ReadonlyArray<ContinuationClaim> }
  | { readonly unavailable: string }

/**
 * Why startup recovery could not repair a session: the data directory refused one of its reads or
 * writes (read-only, permission denied, a link or a file where a file or folder of the layout
 * belongs). Identities only: the fs step, the errno name (or `SymlinkInDataDir`) and the path inside
 * the data directory — never a row. The host that ran recovery fills it from the recovery report.
 * @category models
 */
export interface RecoveryRefusal {
  /** The fs step that was refused (`open`, `link`, `list`, …; `lstat` for a link found below the data dir). */
  readonly operation: string
  /** The errno name (`EROFS`, `EACCES`, `ENOTDIR`, `ELOOP`, …) or `SymlinkInDataDir`. */
  readonly code: string
  /** The refused path, relative to the data directory. */
  readonly path: string
}

/**
 * The pure planner's input.
 * @category models
 */
export interface PlanningInput {
  /** The source AgentRun header. */
  readonly source: AgentRun
  /** The source run's ledger. */
  readonly ledger: LedgerSnapshot
  /** Needed when the source (or an ancestor) is a continuation. */
  readonly ancestors?: Ancestors
  /** When absent, early exit 9 is not evaluated. */
  readonly boundaryHolders?: BoundaryHolders
  readonly facts: HostFacts
  /** What the host read for the chain's open operations (Phase 2), by operation id. */
  readonly operationFacts?: ReadonlyMap<string, OperationFacts>
  /** Lowercase hex SHA-256 of the source's committed rows as stored, when the read gave it. */
  readonly sourceDigest?: string
}
