/**
 * The store ports the runtime is written against. JSONL files, a SQLite database or a shared
 * PostgreSQL server each provide this one shape (docs/decisions.md #80); what lies beneath a port
 * (files, rows, locks) is the adapter's own business, checked by `@maka/store-conformance`.
 */
import type { AgentRunStore } from './AgentRunStore.js'
import type { ClaimStore } from './ClaimStore.js'
import type { OwnerLockStore } from './OwnerLockStore.js'
import type { RuntimeEventStore } from './RuntimeEventStore.js'
import type { SessionStore } from './SessionStore.js'
import type { ShellRunStore } from './ShellRunStore.js'
import type { SessionSurveyReader } from './SessionSurvey.js'

/**
 * What a store promises beyond the ports themselves, fixed when it is opened.
 * @category models
 */
export interface StoreCapabilities {
  /**
   * Whether an append with `durable: true` survives a crash of the machine once it resolved: the
   * row, and every row before it, is on stable storage. The tool journal (Phase 2) writes its
   * dispatch and outcome rows only on a store that answers true, because "a call committed without a
   * dispatch row" proves "never dispatched" only when an acknowledged dispatch row cannot be lost.
   * JSONL: true (one `O_APPEND` write of the row and its newline, then an fsync of the file and of
   * its directory chain up to the data dir, before the append resolves). SQLite: true (WAL with
   * `synchronous=FULL`, set at open). PostgreSQL: true only when, at open, the server acknowledges a
   * commit after flushing its WAL locally (`fsync` on, `synchronous_commit` a level that waits for
   * the local flush, not `off`), or the adapter was told to assume it; false until the store has
   * been opened (`ready()`).
   */
  readonly durableAppend: boolean
}

/**
 * Every port of one store, whatever its medium.
 * @category models
 */
export interface StorePorts {
  readonly sessions: SessionStore
  readonly runs: AgentRunStore
  readonly events: RuntimeEventStore
  readonly shellRuns: ShellRunStore
  readonly claims: ClaimStore
  readonly ownerLocks: OwnerLockStore
  /**
   * Many sessions' recovery facts in a few statements (`SessionSurvey`), where the store can read
   * them so; absent where reading session by session costs as little (the JSONL files).
   */
  readonly survey?: SessionSurveyReader
  /** What this store promises (`StoreCapabilities`); the runtime reads it, never the store's kind. */
  readonly capabilities: StoreCapabilities
  /**
   * Where the data lives, in words safe for a log line or an error (a file path; never a password or
   * a full connection string).
   */
  readonly location: string
  /** Releases what the adapter holds open (a database handle, a pool, the ledger files kept open). */
  readonly close?: () => Promise<void>
}
