/**
 * Test support: fresh databases on the scratch cluster the globalSetup started
 * (`inject('postgresUrl')`), each dropped at the end.
 */
import pg from 'pg'
import { inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

let counter = 0

/** The scratch cluster's URL of its maintenance database. */
export const clusterUrl = (): string => inject('postgresUrl')

/** The URL of database `name` on the scratch cluster. */
export const databaseUrl = (name: string): string => {
  const url = new URL(clusterUrl())
  url.pathname = `/${name}`
  return url.toString()
}

const admin = async <A>(body: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: clusterUrl() })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}

/** Creates an empty database and returns its URL. */
export const freshDatabase = async (): Promise<string> => {
  counter += 1
  const name = `t_${process.pid}_${counter}`
  await admin((client) => client.query(`CREATE DATABASE ${name}`))
  return databaseUrl(name)
}

/** Drops a database made by `freshDatabase`, whoever is still connected to it. */
export const dropDatabase = async (url: string): Promise<void> => {
  const name = new URL(url).pathname.slice(1)
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
}

/** Runs statements on a database directly, bypassing the ports. */
export const onDatabase = async <A>(url: string, body: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await body(client)
  } finally {
    await client.end()
  }
}
