/**
 * The JSONL file stores over synchronous filesystem calls (`syncStoreFs`, what the CLI's
 * short-lived commands use: decision 68) against the conformance suite: the same calls in the same
 * order, so every case must hold exactly as it does over `fs/promises`; the children of the race
 * and kill cases use the synchronous calls too.
 */
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describeStoreConformance } from '@maka/store-conformance'
import { ledgerPath, makeFileStores, syncStoreFs } from '../src/index.js'

const CHILD = fileURLToPath(new URL('./syncFileStores.mjs', import.meta.url))

describeStoreConformance('jsonl over synchronous calls', {
  durableAppend: true,
  survey: false,
  fresh: () => mkdtemp(join(tmpdir(), 'maka-conformance-jsonl-sync-')),
  open: (dataDir) => Promise.resolve(makeFileStores(dataDir, { fs: syncStoreFs })),
  remove: (dataDir) => rm(dataDir, { recursive: true, force: true }),
  child: { module: CHILD, open: 'openSyncFileStores' },
  writeGarbageRow: (dataDir, sessionId, runId) =>
    appendFile(ledgerPath(dataDir, sessionId, runId), '{"not":"a runtime event"}\n'),
  tearTail: (dataDir, sessionId, runId, bytes) => appendFile(ledgerPath(dataDir, sessionId, runId), bytes),
  rewriteRow: async (dataDir, sessionId, runId, line, text) => {
    const path = ledgerPath(dataDir, sessionId, runId)
    const rows = (await readFile(path, 'utf8')).split('\n')
    rows[line - 1] = text
    await writeFile(path, rows.join('\n'))
  },
})
