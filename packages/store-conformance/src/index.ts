/**
 * @maka/store-conformance — the one suite every store adapter (JSONL, SQLite, PostgreSQL) runs:
 * `describeStoreConformance(name, subject)` registers vitest cases over the store ports. Test
 * support only; never published.
 */
export { describeStoreConformance, conformanceRows, type ConformanceSubject } from './describeStoreConformance.js'
export { killContinuationWriterAt, type WriterMessage } from './children.js'
