/**
 * SIGKILL in the middle of each write of a continuation (issue 14): the store conformance package's
 * kill test (`describeContinuationKills`) against a fresh database file. After each kill the file
 * must pass SQLite's own integrity check, and the store must hold every invariant of the test.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describeContinuationKills } from '@maka/store-conformance'
import Database from 'better-sqlite3'
import { afterAll, expect } from 'vitest'
import { openSqliteStores } from '../src/index.js'

const dirs: Array<string> = []
afterAll(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

describeContinuationKills({
  title: 'leaves a database that opens intact, with every invariant held, at every write',
  child: { module: fileURLToPath(new URL('../dist/index.js', import.meta.url)), open: 'openSqliteStores' },
  fresh: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'maka-sqlite-kill-'))
    dirs.push(dir)
    return join(dir, 'maka.sqlite')
  },
  open: (file) => openSqliteStores(file),
  afterKill: async (file) => {
    const db = new Database(file, { readonly: true })
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    } finally {
      db.close()
    }
  },
})
