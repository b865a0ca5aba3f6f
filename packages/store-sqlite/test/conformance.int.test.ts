/**
 * The SQLite stores against the store conformance suite, with real child processes importing the
 * built `dist/`.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describeStoreConformance } from '@maka/store-conformance'
import Database from 'better-sqlite3'
import { openSqliteStores } from '../src/index.js'

const DIST = fileURLToPath(new URL('../dist/index.js', import.meta.url))

describeStoreConformance('sqlite', {
  durableAppend: true,
  survey: true,
  fresh: async () => join(await mkdtemp(join(tmpdir(), 'maka-conformance-sqlite-')), 'maka.sqlite'),
  open: (file) => Promise.resolve(openSqliteStores(file)),
  remove: (file) => rm(dirname(file), { recursive: true, force: true }),
  child: { module: DIST, open: 'openSqliteStores' },
  writeGarbageRow: (file, sessionId, runId) => {
    const db = new Database(file)
    try {
      const seq = db
        .prepare('SELECT COUNT(*) FROM events WHERE session_id = ? AND run_id = ?')
        .pluck()
        .get(sessionId, runId) as number
      db.prepare('INSERT INTO events (session_id, run_id, seq, event_id, row) VALUES (?, ?, ?, NULL, ?)').run(
        sessionId,
        runId,
        seq + 1,
        '{"not":"a runtime event"}',
      )
    } finally {
      db.close()
    }
    return Promise.resolve()
  },
  rewriteRow: (file, sessionId, runId, line, text) => {
    const db = new Database(file)
    try {
      db.prepare('UPDATE events SET row = ? WHERE session_id = ? AND run_id = ? AND seq = ?').run(
        text,
        sessionId,
        runId,
        line,
      )
    } finally {
      db.close()
    }
    return Promise.resolve()
  },
})
