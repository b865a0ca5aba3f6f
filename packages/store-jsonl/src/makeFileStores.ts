/**
 * The file-backed store ports of one data directory, built together so they share the
 * durable-directory cache; the per-run write queue is shared by the whole process.
 */
import { resolve } from 'node:path'
import type {
  AgentRunStore,
  ClaimStore,
  OwnerLockStore,
  RuntimeEventStore,
  SessionStore,
  ShellRunStore,
  StorePorts,
} from '@maka/stores'
import { makeAgentRunStore } from './fileAgentRunStore.js'
import { makeClaimStore } from './fileClaimStore.js'
import { makeOwnerLockStore } from './fileOwnerLockStore.js'
import { makeRuntimeEventStore } from './fileRuntimeEventStore.js'
import { makeSessionStore } from './fileSessionStore.js'
import { makeShellRunStore } from './fileShellRunStore.js'
import { makeStoreContext } from './internal/durableFs.js'
import type { StoreFs } from './StoreFs.js'

/**
 * Every store of one data directory.
 * @category models
 */
export interface FileStores extends StorePorts {
  /** The absolute data directory. */
  readonly dataDir: string
  readonly sessions: SessionStore
  readonly runs: AgentRunStore
  readonly events: RuntimeEventStore
  readonly shellRuns: ShellRunStore
  readonly claims: ClaimStore
  readonly ownerLocks: OwnerLockStore
  /**
   * Closes the ledgers kept open between appends (decision 168). Optional to call: the process's exit
   * closes them too, and nothing written waits on it. The stores stay usable after it.
   */
  readonly close: () => Promise<void>
}

/**
 * Options of `makeFileStores`.
 * @category models
 */
export interface FileStoresOptions {
  /** The filesystem port; node's by default. Tests pass `makeFaultInjectingFs(nodeStoreFs)`. */
  readonly fs?: StoreFs
}

// A durable append is one O_APPEND write of the row and its newline, then an fsync of the file and
// of its directory chain up to the data dir, and it resolves only after both (decision 150).
const FILE_CAPABILITIES = Object.freeze({ durableAppend: true })

/**
 * Opens the stores of a data directory. Touches nothing on disk until a method runs.
 * @category constructors
 */
export const makeFileStores = (dataDir: string, options: FileStoresOptions = {}): FileStores => {
  const context = makeStoreContext(resolve(dataDir), options.fs)
  const events = makeRuntimeEventStore(context)
  return {
    dataDir: context.dataDir,
    location: context.dataDir,
    sessions: makeSessionStore(context),
    runs: makeAgentRunStore(context),
    events,
    shellRuns: makeShellRunStore(context),
    claims: makeClaimStore(context),
    ownerLocks: makeOwnerLockStore(context),
    capabilities: FILE_CAPABILITIES,
    close: events.close,
  }
}
