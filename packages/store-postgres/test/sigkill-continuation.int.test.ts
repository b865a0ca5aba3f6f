/**
 * SIGKILL in the middle of each write of a continuation (issue 14), as for SQLite: the store
 * conformance package's kill test (`describeContinuationKills`) against a fresh database. The server
 * rolls back what the dead client left open; after each kill none of its connections — and so none
 * of its session locks or open transactions — may be left on the server, and the store must hold
 * every invariant of the test.
 */
import { fileURLToPath } from 'node:url'
import { describeContinuationKills } from '@maka/store-conformance'
import { afterAll } from 'vitest'
import { openPostgresStores } from '../src/index.js'
import { dropDatabase, freshDatabase, onDatabase } from './support.js'

const databases: Array<string> = []
afterAll(async () => {
  for (const url of databases.splice(0)) await dropDatabase(url)
})

// The dead client's connections are gone from the server, with their locks and open transactions.
const noConnectionLeft = async (url: string): Promise<void> => {
  const database = new URL(url).pathname.slice(1)
  for (let waited = 0; ; waited += 1) {
    const left = await onDatabase(url, async (c) => {
      const others = await c.query(
        'SELECT count(*)::integer AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      )
      return (others.rows[0] as { n: number }).n
    })
    // The checking instance has not connected yet: any other connection is the dead writer's.
    if (left === 0) return
    if (waited > 600) throw new Error(`the dead writer's ${left} connection(s) are still on the server`)
    await new Promise((done) => setTimeout(done, 100))
  }
}

describeContinuationKills({
  title: 'leaves every invariant held and nothing of the dead client on the server, at every write',
  child: { module: fileURLToPath(new URL('../dist/index.js', import.meta.url)), open: 'openPostgresStores' },
  fresh: async () => {
    const url = await freshDatabase()
    databases.push(url)
    return url
  },
  open: (url) => openPostgresStores(url),
  afterKill: noConnectionLeft,
})
