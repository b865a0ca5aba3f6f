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
   * Where the data lives, in words safe for a log line or an error (a file path; never a password or
   * a full connection string).
   */
  readonly location: string
  /** Releases what the adapter holds open (a database handle, a pool); the file stores hold nothing. */
  readonly close?: () => Promise<void>
}
