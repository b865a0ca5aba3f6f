/**
 * @maka/store-conformance — the one suite every store adapter (JSONL, SQLite, PostgreSQL) runs:
 * `describeStoreConformance(name, subject)` registers vitest cases over the store ports, and
 * `describeContinuationKills(subject)` the SIGKILL test of a transactional store's continuation
 * writes. Test support only; never published.
 */
export { describeStoreConformance, conformanceRows, type ConformanceSubject } from './describeStoreConformance.js'
export { describeContinuationKills, type ContinuationKillSubject } from './describeContinuationKills.js'
export { claimAndHeader, runIdentity, type Identity } from './records.js'
