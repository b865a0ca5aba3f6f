/**
 * Reaching the server: a pool for the ports' statements, the schema brought up to date once per
 * instance, and words for the database that are safe in a log line. Nothing here ever prints the
 * connection string: the URL holds credentials, and driver errors are rewritten without them.
 */
import { createHash } from 'node:crypto'
import type pg from 'pg'
import { MIGRATIONS, SCHEMA_VERSION } from './schema.js'

/**
 * Why a database cannot be used: it was written by a newer maka (its schema version is unknown here).
 * @category errors
 */
export class SchemaTooNew extends Error {
  readonly code = 'SCHEMA_TOO_NEW'
  constructor(readonly found: number) {
    super(`database schema version ${found} is newer than this maka understands (${SCHEMA_VERSION})`)
  }
}

/**
 * A connection string that is not one: the words say what is wrong, never what was given.
 * @category errors
 */
export class BadConnectionString extends Error {
  readonly code = 'BAD_CONNECTION_STRING'
}

/** What the adapter knows of its URL: the driver's config and the log-safe words. */
export interface Target {
  readonly config: pg.ClientConfig
  /** `postgres database <name>`: no host, user, password or query parameters. */
  readonly location: string
  /** Strings that must never leave the adapter (URL, host, user, password), longest first. */
  readonly secrets: ReadonlyArray<string>
}

// Long enough for a loaded server, short enough that an unreachable one is a prompt, clear failure.
const CONNECT_TIMEOUT_MS = 10_000

/**
 * Parses a `postgres://` or `postgresql://` URL.
 * @category constructors
 */
export const parseTarget = (url: string): Target => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new BadConnectionString('the connection string is not a valid URL')
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new BadConnectionString('the connection string is not a postgres:// URL')
  }
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text)
    } catch {
      throw new BadConnectionString('the connection string has a malformed %-escape')
    }
  }
  const database = decode(parsed.pathname.replace(/^\//, '')) || 'postgres'
  // The driver's words may repeat the host (an internal name, not for logs), the user or the
  // password: each is taken out. Very short ones are left, as cutting them would garble the words.
  const secrets = [url, parsed.password, decode(parsed.password)]
    .concat([parsed.hostname, parsed.host, parsed.username, decode(parsed.username)].filter((s) => s.length >= 3))
    .filter((s) => s !== '')
    .sort((a, b) => b.length - a.length)
  return {
    config: { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true },
    location: `postgres database ${database}`,
    secrets,
  }
}

/**
 * A driver error with every secret of the target taken out of its words, keeping its code
 * (SQLSTATE, or the errno of a failed connect) so callers can tell what happened.
 * @category destructors
 */
export const redactError = (target: Target, cause: unknown): Error & { code: string } => {
  const raw = cause instanceof Error ? cause.message : String(cause)
  let words = raw
  for (const secret of target.secrets) words = words.split(secret).join('…')
  const code =
    typeof cause === 'object' && cause !== null && typeof (cause as { code?: unknown }).code === 'string'
      ? (cause as { code: string }).code
      : cause instanceof Error && cause.name === 'AggregateError'
        ? 'ECONNREFUSED'
        : 'UNKNOWN'
  return Object.assign(new Error(words === '' ? 'the server gave no reason' : words), { code })
}

/**
 * The advisory-lock key of a session: a constant namespace and 31 bits of the id's SHA-256. Two
 * sessions whose keys collide only make each other's owner wait (a false "held"), never share one.
 * @category constructors
 */
export const sessionLockKey = (sessionId: string): readonly [number, number] => [
  0x4d414b41,
  createHash('sha256').update(sessionId, 'utf8').digest().readUInt32BE(0) & 0x7fffffff,
]

const MIGRATION_LOCK = [0x4d414b41, 0] as const

/**
 * Brings the schema up to date (each migration once, whatever the number of hosts opening it).
 * @category constructors
 */
export const migrate = async (pool: pg.Pool): Promise<void> => {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...MIGRATION_LOCK])
    await client.query('CREATE TABLE IF NOT EXISTS maka_schema (version integer NOT NULL)')
    const found = await client.query<{ version: number }>('SELECT version FROM maka_schema')
    let version = found.rows[0]?.version ?? 0
    if (found.rows.length === 0) await client.query('INSERT INTO maka_schema (version) VALUES (0)')
    if (version > SCHEMA_VERSION) throw new SchemaTooNew(version)
    await client.query('COMMIT')
    while (version < SCHEMA_VERSION) {
      await client.query('BEGIN')
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...MIGRATION_LOCK])
      const now = (await client.query<{ version: number }>('SELECT version FROM maka_schema')).rows[0]!.version
      if (now === version) {
        await client.query(MIGRATIONS[version]!)
        await client.query('UPDATE maka_schema SET version = $1', [version + 1])
      }
      await client.query('COMMIT')
      version = Math.max(now, version + 1)
    }
  } catch (cause) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw cause
  } finally {
    client.release()
  }
}
