/**
 * The standard composition for hosts: file stores over one data directory, a host inspector fed
 * by those stores and the registered tools, and a runtime over both.
 */
import { makeHostInspector, type CheckpointProvider, type HostInspector } from '@maka/host-inspector'
import { type StorePorts } from '@maka/stores'
import { makeFileStores } from '@maka/store-jsonl'
import { makeRuntime, type Runtime } from './makeRuntime.js'
import { sessionStatePort } from './portAdapters.js'
import type { RuntimeDeps } from './RuntimeDeps.js'

/**
 * Options of the standard composition: everything a runtime needs except stores and inspector.
 * @category models
 */
export type FileRuntimeOptions = Omit<RuntimeDeps, 'stores' | 'inspector'> & {
  readonly dataDir: string
  /** Where files that are not store state live (supervised shell output); `dataDir` when absent. */
  readonly filesDir?: string
  readonly checkpointProvider?: CheckpointProvider
  /**
   * The stores to run over instead of the JSONL files of `dataDir` (a SQLite or PostgreSQL store
   * chosen with `--store`); `dataDir` still holds everything that is not session state.
   */
  readonly stores?: StorePorts
}

/**
 * A runtime over a data directory, with the parts it was built from.
 * @category models
 */
export interface FileRuntime {
  readonly stores: StorePorts
  readonly inspector: HostInspector
  readonly runtime: Runtime
}

/**
 * Composes file stores, a host inspector and a runtime.
 * @category constructors
 */
export const makeFileRuntime = (options: FileRuntimeOptions): FileRuntime => {
  const { dataDir, filesDir, checkpointProvider, stores: chosen, ...rest } = options
  const stores = chosen ?? makeFileStores(dataDir)
  const inspector = makeHostInspector({
    port: sessionStatePort(stores),
    toolNames: () => rest.tools.map((tool) => tool.name),
    ...(checkpointProvider === undefined ? {} : { checkpointProvider }),
  })
  return { stores, inspector, runtime: makeRuntime({ ...rest, stores, inspector, dataDir: filesDir ?? dataDir }) }
}
