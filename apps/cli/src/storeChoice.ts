/**
 * Which store a command works on: `--store jsonl:DIR | sqlite:FILE | postgres://…`, else
 * `MAKA_STORE`, else the JSONL files of the data directory (docs/decisions.md #82). The SQLite and
 * PostgreSQL adapters are imported only when chosen, so the default path loads neither driver. A
 * connection string is never echoed: errors and the verbose log name the store's kind only.
 */
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { type StorePorts } from '@maka/stores'
import { makeFileStores } from '@maka/store-jsonl'
import { errnoCode } from '@maka/stores'
import { BadInputError, StoreUnavailableError } from './ExitCode.js'
import { POSTGRES_DRIVER, SQLITE_DRIVER, loadOptional } from './optionalPackage.js'

/**
 * A parsed store choice.
 * @category models
 */
export type StoreSpec =
  | { readonly kind: 'jsonl'; readonly dir: string }
  | { readonly kind: 'sqlite'; readonly file: string }
  | { readonly kind: 'postgres'; readonly url: string }

const USAGE = 'use jsonl:DIR, sqlite:FILE or postgres://…'

/**
 * Parses one store value; `from` names where it came from, for the error sentence.
 * @category constructors
 */
export const parseStoreSpec = (value: string, from: string): StoreSpec => {
  const text = value.trim()
  if (/^postgres(ql)?:\/\//i.test(text)) {
    try {
      new URL(text)
    } catch {
      throw new BadInputError(`The ${from} value is not a valid postgres:// URL: ${USAGE}.`)
    }
    return { kind: 'postgres', url: text }
  }
  const colon = text.indexOf(':')
  const scheme = colon < 0 ? '' : text.slice(0, colon).toLowerCase()
  const rest = colon < 0 ? '' : text.slice(colon + 1)
  if ((scheme === 'jsonl' || scheme === 'sqlite') && rest.trim() === '') {
    throw new BadInputError(
      `The ${from} value ${scheme}: names no ${scheme === 'jsonl' ? 'directory' : 'file'}: ${USAGE}.`,
    )
  }
  if (scheme === 'jsonl') return { kind: 'jsonl', dir: resolve(rest) }
  if (scheme === 'sqlite') return { kind: 'sqlite', file: resolve(rest) }
  // Only a short plain scheme is repeated back: the value may be a mistyped connection string.
  const named = /^[a-z][a-z0-9+.-]{0,15}$/.test(scheme) ? ` (${scheme}:)` : ''
  throw new BadInputError(`The ${from} value is not a store${named}: ${USAGE}.`)
}

/**
 * The store chosen by `--store`, else `MAKA_STORE`; null means the default (the data dir's JSONL).
 * @category constructors
 */
export const chooseStore = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env): StoreSpec | null => {
  if (flag !== undefined) return parseStoreSpec(flag, '--store')
  const fromEnv = env['MAKA_STORE']
  return fromEnv === undefined || fromEnv.trim() === '' ? null : parseStoreSpec(fromEnv, 'MAKA_STORE')
}

/**
 * Words for a store that are safe in a log line or an error: never a connection string.
 * @category destructors
 */
export const describeStore = (spec: StoreSpec): string =>
  spec.kind === 'jsonl' ? `jsonl ${spec.dir}` : spec.kind === 'sqlite' ? `sqlite ${spec.file}` : 'postgres'

/**
 * Opens the PostgreSQL stores of `url` and connects now, so a server that cannot be reached, or a
 * database from a newer maka, is one sentence and exit 1 before the command reads or writes
 * anything. The adapter (and its driver) is imported only here. Neither the URL nor its user or
 * password appear in the sentence: the adapter's `location` names the database and host only.
 * @category constructors
 */
export const openPostgresStores = async (url: string): Promise<StorePorts> => {
  // The adapter imports its driver when it loads, so a missing `pg` shows here too.
  const adapter = await loadOptional(POSTGRES_DRIVER, () => import('@maka/store-postgres'))
  let stores: Awaited<ReturnType<typeof adapter.openPostgresStores>>
  try {
    stores = adapter.openPostgresStores(url)
  } catch (error) {
    if (error instanceof adapter.BadConnectionString) {
      throw new BadInputError(`The PostgreSQL store cannot be used: ${error.message}: ${USAGE}.`)
    }
    throw error
  }
  try {
    await stores.ready()
  } catch (error) {
    await stores.close()
    const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'UNKNOWN'
    const words = error instanceof Error ? error.message : String(error)
    throw new StoreUnavailableError(
      `The store ${stores.location} cannot be used (${code}: ${words}); nothing was written.`,
    )
  }
  return stores
}

/**
 * Whether the database file exists yet; a path that is not a regular file is bad input.
 * @category guards
 */
export const sqliteFileExists = async (file: string): Promise<boolean> => {
  try {
    if (!(await stat(file)).isFile()) throw new BadInputError(`The SQLite store ${file} is not a file.`)
    return true
  } catch (error) {
    if (error instanceof BadInputError) throw error
    const code = errnoCode(error) ?? 'UNKNOWN'
    if (code === 'ENOENT') return false
    throw new BadInputError(`The SQLite store ${file} cannot be read (${code}).`)
  }
}

/**
 * Opens the ports of a chosen store. `create: false` (read commands) never creates a missing SQLite
 * file: it reads as a store with no sessions.
 * @category constructors
 */
export const openChosenStores = async (spec: StoreSpec, options: { readonly create: boolean }): Promise<StorePorts> => {
  switch (spec.kind) {
    case 'jsonl':
      return makeFileStores(spec.dir)
    case 'sqlite': {
      // The adapter imports better-sqlite3 when it loads: a missing driver fails the import.
      const { openSqliteStores } = await loadOptional(SQLITE_DRIVER, () => import('@maka/store-sqlite'))
      return openSqliteStores(spec.file, { create: options.create })
    }
    case 'postgres':
      return openPostgresStores(spec.url)
  }
}
