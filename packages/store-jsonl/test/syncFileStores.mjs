// The JSONL stores over synchronous filesystem calls (decision 68), for the suite's child processes.
import { makeFileStores, syncStoreFs } from '../dist/index.js'

export const openSyncFileStores = (dataDir) => makeFileStores(dataDir, { fs: syncStoreFs })
