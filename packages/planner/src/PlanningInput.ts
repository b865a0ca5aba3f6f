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
import type { HostFacts } from './HostFacts.js'

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
}
