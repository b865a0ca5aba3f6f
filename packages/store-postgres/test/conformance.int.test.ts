/**
 * The PostgreSQL stores against the store conformance suite, on the scratch cluster, with real
 * child processes importing the built `dist/`. Rows commit whole, so there is no torn-row case;
 * ownership is the server's (`ownership: 'server'`).
 */
import { fileURLToPath } from 'node:url'
import { describeStoreConformance } from '@maka/store-conformance'
import { openPostgresStores } from '../src/index.js'
import { dropDatabase, freshDatabase, onDatabase } from './support.js'

const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))

describeStoreConformance('postgres', {
  fresh: freshDatabase,
  open: (url) => Promise.resolve(openPostgresStores(url)),
  remove: dropDatabase,
  child: { module: DIST, open: 'openPostgresStores' },
  ownership: 'server',
  // The scratch cluster runs with fsync and synchronous_commit off (scripts/scratch-postgres.mjs): a
  // store opened without `assumeDurable` must say that an acknowledged row could be lost.
  durableAppend: false,
  survey: true,
  writeGarbageRow: (url, sessionId, runId) =>
    onDatabase(url, async (client) => {
      await client.query(
        'INSERT INTO events (session_id, run_id, seq, event_id, row) ' +
          'SELECT $1, $2, COALESCE(MAX(seq), 0) + 1, NULL, $3 FROM events WHERE session_id = $1 AND run_id = $2',
        [sessionId, runId, '{"not":"a runtime event"}'],
      )
    }),
  rewriteRow: (url, sessionId, runId, line, text) =>
    onDatabase(url, async (client) => {
      await client.query('UPDATE events SET row = $1 WHERE session_id = $2 AND run_id = $3 AND seq = $4', [
        text,
        sessionId,
        runId,
        line,
      ])
    }),
})
