/**
 * Checks of what a user typed, done before any runtime or store is built: the data directory, ids,
 * sessions, runs, the workspace directory. Every failure is a `BadInputError` (one line, exit 2),
 * and none of these checks writes anything — a read command never creates the data directory.
 */
import { constants } from 'node:fs'
import { access, stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { RunId, SessionId, type SessionRecord } from '@maka/events'
import { type StorePorts } from '@maka/stores'
import { errnoCode } from '@maka/stores'
import { BadInputError } from './ExitCode.js'

/**
 * Whether the data directory exists yet (a read command on a missing one sees no sessions).
 * @category models
 */
export interface DataDir {
  readonly path: string
  readonly exists: boolean
}

/**
 * `--data-dir`, else `$MAKA_HOME`, else `~/.maka`, as an absolute path. An empty `--data-dir` is
 * bad input: it would silently mean the current directory.
 * @category constructors
 */
export const resolveDataDir = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string => {
  if (flag !== undefined && flag.trim() === '') {
    throw new BadInputError('The data directory is empty (--data-dir ""): name a directory.')
  }
  const home = env['MAKA_HOME']
  return resolve(flag ?? (home !== undefined && home !== '' ? home : join(homedir(), '.maka')))
}

/**
 * The data directory must be a readable (and for `write`, writable) directory, or not exist yet.
 * @category guards
 */
export const checkDataDir = async (path: string, mode: 'read' | 'write'): Promise<DataDir> => {
  let isDirectory: boolean
  try {
    isDirectory = (await stat(path)).isDirectory()
  } catch (error) {
    const code = errnoCode(error) ?? 'UNKNOWN'
    if (code === 'ENOENT') return { path, exists: false }
    if (code === 'ENOTDIR') throw new BadInputError(`The data directory ${path} is not a directory.`)
    throw new BadInputError(`The data directory ${path} cannot be read (${code}).`)
  }
  if (!isDirectory) throw new BadInputError(`The data directory ${path} is not a directory.`)
  const wanted = constants.R_OK | constants.X_OK | (mode === 'write' ? constants.W_OK : 0)
  try {
    await access(path, wanted)
  } catch {
    throw new BadInputError(`The data directory ${path} cannot be ${mode === 'write' ? 'written' : 'read'}.`)
  }
  return { path, exists: true }
}

const shown = (value: string): string => JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)

/**
 * The branded id each kind of flag parses to.
 * @category models
 */
export interface SafeIds {
  readonly session: SessionId
  readonly run: RunId
}

const safeIdGuards: { readonly [K in keyof SafeIds]: (value: unknown) => value is SafeIds[K] } = {
  session: SessionId.is,
  run: RunId.is,
}

/**
 * An id that will name a file or folder must match `^[A-Za-z0-9_-]{1,128}$`; the one place a
 * flag's id becomes a branded id.
 * @category guards
 */
export const requireSafeId = <K extends keyof SafeIds>(kind: K, value: string): SafeIds[K] => {
  const isSafe: (value: unknown) => value is SafeIds[K] = safeIdGuards[kind]
  if (!isSafe(value)) {
    throw new BadInputError(`Invalid ${kind} id ${shown(value)}: use 1 to 128 letters, digits, "_" or "-".`)
  }
  return value
}

/**
 * The session must exist and its `session.json` must be readable.
 * @category guards
 */
export const requireSession = async (
  stores: StorePorts,
  dataDir: DataDir,
  sessionId: string,
): Promise<SessionRecord> => {
  requireSafeId('session', sessionId)
  if (!dataDir.exists)
    throw new BadInputError(`Unknown session ${shown(sessionId)} (the data directory ${dataDir.path} does not exist).`)
  const read = await stores.sessions.read(sessionId)()
  if (E.isRight(read)) return read.right
  if (read.left._tag === 'NotFound') throw new BadInputError(`Unknown session ${shown(sessionId)} in ${dataDir.path}.`)
  throw new BadInputError(`The session ${shown(sessionId)} cannot be read (${read.left._tag}).`)
}

/**
 * The run must have a folder in the session (a folder with a broken header is the planner's to judge).
 * @category guards
 */
export const requireRun = async (stores: StorePorts, sessionId: string, runId: string): Promise<void> => {
  requireSafeId('run', runId)
  const listed = await stores.runs.list(sessionId)()
  if (E.isLeft(listed))
    throw new BadInputError(`The runs of session ${shown(sessionId)} cannot be listed (${listed.left._tag}).`)
  if (!listed.right.some((entry) => entry.runId === runId)) {
    throw new BadInputError(`Unknown run ${shown(runId)} in session ${shown(sessionId)}.`)
  }
}

/**
 * The workspace of a new session must be an existing directory.
 * @category guards
 */
export const requireDirectory = async (path: string): Promise<string> => {
  const absolute = resolve(path)
  try {
    if ((await stat(absolute)).isDirectory()) return absolute
  } catch {
    // Reported below as one line.
  }
  throw new BadInputError(`The workspace directory ${absolute} does not exist or is not a directory.`)
}

/**
 * The flag that enables safe-boundary resume; read from the environment in the host only.
 * @category guards
 */
export const safeBoundaryResumeFromEnv = (env: NodeJS.ProcessEnv = process.env): boolean =>
  env['MAKA_RUNTIME_SAFE_BOUNDARY_RESUME'] === '1'
