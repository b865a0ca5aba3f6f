/**
 * The standard composition for hosts: file stores over one data directory, a host inspector fed
 * by those stores and the registered tools, and a runtime over both.
 */
import { makeHostInspector, type CheckpointProvider, type HostInspector } from '@maka/host-inspector'
import { makeFileStores, type FileStores } from '@maka/stores'
import { makeRuntime, type Runtime } from './makeRuntime.js'
import { sessionStatePort } from './portAdapters.js'
import type { RuntimeDeps } from './RuntimeDeps.js'

/**
 * Options of the standard composition: everything a runtime needs except stores and inspector.
 * @category models
 */
export type FileRuntimeOptions = Omit<RuntimeDeps, 'stores' | 'inspector'> & {
  readonly dataDir: string
  readonly checkpointProvider?: CheckpointProvider
}

/**
 * A runtime over a data directory, with the parts it was built from.
 * @category models
 */
export interface FileRuntime {
  readonly stores: FileStores
  readonly inspector: HostInspector
  readonly runtime: Runtime
}

/**
 * Composes file stores, a host inspector and a runtime.
 * @category constructors
 */
export const makeFileRuntime = (options: FileRuntimeOptions): FileRuntime => {
  const { dataDir, checkpointProvider, ...rest } = options
  const stores = makeFileStores(dataDir)
  const inspector = makeHostInspector({
    port: sessionStatePort(stores),
    toolNames: () => rest.tools.map((tool) => tool.name),
    ...(checkpointProvider === undefined ? {} : { checkpointProvider }),
  })
  return { stores, inspector, runtime: makeRuntime({ ...rest, stores, inspector }) }
}
