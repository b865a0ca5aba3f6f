/**
 * The JSONL file stores against the conformance suite: the reference adapter, so every case here
 * is also the behaviour the other adapters are held to.
 */
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describeStoreConformance } from '@maka/store-conformance'
import { ledgerPath, makeFileStores } from '../src/index.js'

const STORES_DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))

describeStoreConformance('jsonl', {
  durableAppend: true,
  survey: false,
  fresh: () => mkdtemp(join(tmpdir(), 'maka-conformance-jsonl-')),
  open: (dataDir) => Promise.resolve(makeFileStores(dataDir)),
  remove: (dataDir) => rm(dataDir, { recursive: true, force: true }),
  child: { module: STORES_DIST, open: 'makeFileStores' },
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
