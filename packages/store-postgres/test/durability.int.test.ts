/**
 * `capabilities.durableAppend` of the PostgreSQL stores against real servers (docs/decisions.md
 * #152): on the package's scratch cluster, which runs with `fsync` and `synchronous_commit` off, it
 * is false (and true only with `assumeDurable`); on a second scratch cluster started here with
 * `fsync` on, it follows `synchronous_commit` as the store's connections see it when the store
 * opens — from the database's settings, the connection string, or the server's `fsync`.
 */
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isDurableCommit, type CommitSettings } from '../src/durability.js'
import { openPostgresStores, type PostgresStores } from '../src/index.js'
import { dropDatabase, freshDatabase, onDatabase } from './support.js'

// The script every PostgreSQL test run starts its cluster with; a path in a variable, since it is
// plain JavaScript without types.
const SCRATCH = fileURLToPath(new URL('../../../scripts/scratch-postgres.mjs', import.meta.url))
interface Cluster {
  readonly url: string
  readonly stop: () => void
}
const startCluster = async (options: { readonly fsync: boolean }): Promise<Cluster> => {
  const script = (await import(SCRATCH)) as {
    readonly startScratchPostgres: (o: { readonly fsync: boolean }) => Promise<Cluster>
  }
  return script.startScratchPostgres(options)
}

const opened: Array<PostgresStores> = []
const databases: Array<string> = []
afterAll(async () => {
  for (const stores of opened.splice(0)) await stores.close()
  for (const url of databases.splice(0)) await dropDatabase(url)
})
const open = (url: string, options: { readonly assumeDurable?: boolean } = {}) => {
  const stores = openPostgresStores(url, options)
  opened.push(stores)
  return stores
}

// What a new connection to `url` sees, read past the adapter.
const settingsOf = (url: string): Promise<CommitSettings> =>
  onDatabase(url, async (client) => ({
    synchronousCommit: (await client.query('SHOW synchronous_commit')).rows[0].synchronous_commit as string,
    fsync: (await client.query('SHOW fsync')).rows[0].fsync as string,
  }))

// The answer of a store opened now on `url`.
const answerAt = async (url: string): Promise<boolean> => {
  const stores = open(url)
  await stores.ready()
  return stores.capabilities.durableAppend
}

describe('capabilities.durableAppend of the PostgreSQL stores', () => {
  describe('on the test cluster, which runs with fsync and synchronous_commit off', () => {
    it('is false before the store opens and after, as the server’s settings imply', async () => {
      const url = await freshDatabase()
      databases.push(url)
      const settings = await settingsOf(url)
      expect(settings).toEqual({ synchronousCommit: 'off', fsync: 'off' })
      const stores = open(url)
      expect(stores.capabilities.durableAppend).toBe(false)
      await stores.ready()
      expect(stores.capabilities.durableAppend).toBe(isDurableCommit(settings))
      expect(stores.capabilities.durableAppend).toBe(false)
    })

    it('is true with assumeDurable, before and after the store opens', async () => {
      const url = await freshDatabase()
      databases.push(url)
      const stores = open(url, { assumeDurable: true })
      expect(stores.capabilities.durableAppend).toBe(true)
      await stores.ready()
      expect(stores.capabilities.durableAppend).toBe(true)
    })
  })

  describe('on a cluster with fsync on', () => {
    let cluster: Cluster
    let counter = 0
    beforeAll(async () => {
      cluster = await startCluster({ fsync: true })
    })
    afterAll(async () => {
      for (const stores of opened.splice(0)) await stores.close()
      cluster.stop()
    })
    const admin = async <A>(body: (client: pg.Client) => Promise<A>): Promise<A> => {
      const client = new pg.Client({ connectionString: cluster.url })
      await client.connect()
      try {
        return await body(client)
      } finally {
        await client.end()
      }
    }
    // A fresh database of the cluster, with `synchronous_commit` set on it when given.
    const database = async (synchronousCommit?: string): Promise<string> => {
      counter += 1
      const name = `d_${counter}`
      await admin(async (client) => {
        await client.query(`CREATE DATABASE ${name}`)
        if (synchronousCommit !== undefined) {
          await client.query(`ALTER DATABASE ${name} SET synchronous_commit = ${synchronousCommit}`)
        }
      })
      const url = new URL(cluster.url)
      url.pathname = `/${name}`
      return url.toString()
    }

    it('is true with the defaults, and keeps the answer it had at open', async () => {
      const url = await database()
      expect(await settingsOf(url)).toEqual({ synchronousCommit: 'on', fsync: 'on' })
      const stores = open(url)
      expect(stores.capabilities.durableAppend).toBe(false)
      await stores.ready()
      expect(stores.capabilities.durableAppend).toBe(true)
      const name = new URL(url).pathname.slice(1)
      await admin((client) => client.query(`ALTER DATABASE ${name} SET synchronous_commit = off`))
      // Read at open: the open store keeps its answer; a store opened now sees the new setting.
      expect(stores.capabilities.durableAppend).toBe(true)
      expect(await answerAt(url)).toBe(false)
    })

    it.each([
      ['local', true],
      ['remote_write', true],
      ['remote_apply', true],
      ['off', false],
    ] as const)('with synchronous_commit = %s on the database, is %s', async (level, durable) => {
      const url = await database(level)
      expect(await settingsOf(url)).toEqual({ synchronousCommit: level, fsync: 'on' })
      expect(await answerAt(url)).toBe(durable)
    })

    it('is false when the connection string turns synchronous_commit off', async () => {
      const url = new URL(await database())
      url.searchParams.set('options', '-c synchronous_commit=off')
      expect(await settingsOf(url.toString())).toEqual({ synchronousCommit: 'off', fsync: 'on' })
      expect(await answerAt(url.toString())).toBe(false)
    })

    // Last: it turns the whole cluster's fsync off.
    it('is false once the server runs with fsync off', async () => {
      const url = await database()
      await admin(async (client) => {
        await client.query('ALTER SYSTEM SET fsync = off')
        await client.query('SELECT pg_reload_conf()')
      })
      // The reload reaches new connections on the server's schedule: wait for it, generously.
      for (let waited = 0; (await settingsOf(url)).fsync !== 'off'; waited += 1) {
        if (waited > 600) throw new Error('the server still runs with fsync on after 60 s')
        await new Promise((done) => setTimeout(done, 100))
      }
      expect(await answerAt(url)).toBe(false)
    })
  })
})
