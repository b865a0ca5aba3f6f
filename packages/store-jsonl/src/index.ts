/**
 * @maka/store-jsonl — the file adapter of the store ports (`@maka/stores`): session, AgentRun header,
 * RuntimeEvent ledger, shell-run, continuation-claim and owner-lock files in one data directory
 * (docs/contract.md §1). Every method validates ids before touching the filesystem and returns a
 * `TaskEither` over the `_tag`ged `StoreError` union; nothing throws across this boundary.
 */
export { makeFileStores, type FileStores, type FileStoresOptions } from './makeFileStores.js'
export { nodeStoreFs, syncStoreFs, type StoreFs, type StoreFile, type StoreEntryStat } from './StoreFs.js'
export { makeFaultInjectingFs, type FaultInjectingFs, type Fault, type FsCall } from './faultInjectingFs.js'
export { type LedgerScanner, type LedgerScanOptions, makeLedgerScanner, scanLedger } from './ledgerScanner.js'
export {
  sessionsDir,
  sessionDir,
  sessionRecordPath,
  runsDir,
  runDir,
  runHeaderPath,
  ledgerPath,
  shellRunsDir,
  shellRunPath,
  claimsDir,
  claimFileName,
  claimPath,
  ownerLockPath,
} from './layout.js'
