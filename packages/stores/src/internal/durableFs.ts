/**
 * The filesystem primitives every store is built from, each wrapped so that no fs call can throw
 * past it: a failure becomes a typed `StoreError` in an `Either`. Also the two crash-safe write
 * patterns of ledger-format.md — exclusive create (temp file + `link`) and replace (temp file +
 * `rename`) — and the directory fsyncs that make a new or renamed entry survive a power loss.
 */
import { randomBytes } from 'node:crypto'
import { link, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises'
import type { Dirent } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { ioFailed, notFound, unreadable, type StoreError } from '../StoreError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The async result every internal step returns; it never rejects.
 * @category models
 */
export type Outcome<A> = Promise<E.Either<StoreError, A>>

/**
 * Remembers which directory entries are already durable, so a run's second durable append fsyncs
 * only its file instead of the whole directory chain again.
 * @category models
 */
export interface DirSync {
  /**
   * Makes the entry at `path` and every ancestor entry up to the data dir durable. `replaced` means
   * the entry itself was just swapped by `rename`, so its parent must be fsynced even if known.
   */
  persist(path: string, options?: { readonly replaced?: boolean }): Outcome<void>
}

/**
 * What every store of one `makeFileStores` instance shares.
 * @category models
 */
export interface StoreContext {
  readonly dataDir: string
  readonly dirSync: DirSync
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Runs one fs step, turning a thrown error into `IoFailed{operation, path, code}`.
 * @category constructors
 */
export const attempt = async <A>(operation: string, path: string, f: () => Promise<A>): Outcome<A> => {
  try {
    return E.right(await f())
  } catch (cause) {
    return E.left(ioFailed(operation, path, cause))
  }
}

/**
 * Lifts an internal step to the public `TaskEither`; the catch is a last guard so that even a bug
 * does not reject across the package boundary.
 * @category constructors
 */
export const toTask =
  <A>(f: () => Outcome<A>): TE.TaskEither<StoreError, A> =>
  () =>
    f().catch((cause: unknown) => E.left(ioFailed('unexpected failure in', '(store)', cause)))

/**
 * Creates the shared context of one store instance rooted at an absolute data dir.
 * @category constructors
 */
export const makeStoreContext = (dataDir: string): StoreContext => ({ dataDir, dirSync: makeDirSync(dataDir) })

const makeDirSync = (root: string): DirSync => {
  const durable = new Set<string>()
  return {
    persist: async (path, options) => {
      const walked: Array<string> = []
      let entry = path
      let force = options?.replaced === true
      while (entry !== root && (force || !durable.has(entry))) {
        const parent = dirname(entry)
        if (parent === entry) break
        const synced = await fsyncDir(parent)
        if (E.isLeft(synced)) return synced
        walked.push(entry)
        entry = parent
        force = false
      }
      // Marked only after the whole walk succeeded: a half-synced chain must be walked again.
      for (const done of walked) durable.add(done)
      return E.right(undefined)
    },
  }
}

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * True when an error is the `IoFailed` of the given errno name.
 * @category guards
 */
export const isErrno = (e: StoreError, code: string): boolean => e._tag === 'IoFailed' && e.code === code

// -------------------------------------------------------------------------------------
// reading
// -------------------------------------------------------------------------------------

/**
 * Reads a whole file; a missing file is `NotFound`.
 * @category constructors
 */
export const readBytes = async (path: string): Outcome<Buffer> => {
  const read = await attempt('read', path, () => readFile(path))
  return E.isLeft(read) && isErrno(read.left, 'ENOENT') ? E.left(notFound(path)) : read
}

/**
 * Reads and decodes a JSON record file: missing → `NotFound`, bad JSON or shape → `Unreadable`.
 * @category constructors
 */
export const readRecord = async <A>(path: string, decode: (u: unknown) => E.Either<string, A>): Outcome<A> => {
  const bytes = await readBytes(path)
  if (E.isLeft(bytes)) return bytes
  let parsed: unknown
  try {
    parsed = JSON.parse(bytes.right.toString('utf8'))
  } catch {
    return E.left(unreadable(path, 'not valid JSON'))
  }
  const decoded = decode(parsed)
  return E.isLeft(decoded) ? E.left(unreadable(path, decoded.left)) : decoded
}

/**
 * True when `path` exists.
 * @category constructors
 */
export const pathExists = async (path: string): Outcome<boolean> => {
  const found = await attempt('stat', path, () => stat(path))
  if (E.isRight(found)) return E.right(true)
  return isErrno(found.left, 'ENOENT') ? E.right(false) : found
}

/**
 * The entries of a directory; a missing directory has none.
 * @category constructors
 */
export const listDir = async (path: string): Outcome<ReadonlyArray<Dirent>> => {
  const entries = await attempt('list', path, () => readdir(path, { withFileTypes: true }))
  return E.isLeft(entries) && isErrno(entries.left, 'ENOENT') ? E.right([]) : entries
}

// -------------------------------------------------------------------------------------
// writing
// -------------------------------------------------------------------------------------

/**
 * `mkdir -p`.
 * @category constructors
 */
export const makeDirs = async (path: string): Outcome<void> =>
  attempt('mkdir', path, async () => {
    await mkdir(path, { recursive: true })
  })

/**
 * fsyncs a directory, which makes the entries created or renamed in it durable.
 * @category constructors
 */
export const fsyncDir = async (path: string): Outcome<void> =>
  attempt('fsync', path, async () => {
    const handle = await open(path, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  })

// The leading dot keeps temp files out of every listing: no safe id starts with one.
const tempPathFor = (target: string): string =>
  join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)

const removeQuietly = async (path: string): Promise<void> => {
  // A leftover temp file is harmless (listings skip it), so a failed cleanup is not an error.
  await attempt('unlink', path, () => unlink(path))
}

const writeTemp = async (target: string, bytes: Uint8Array, sync: boolean): Outcome<string> => {
  const temp = tempPathFor(target)
  const written = await attempt('write', temp, async () => {
    const handle = await open(temp, 'wx')
    try {
      await handle.writeFile(bytes)
      if (sync) await handle.sync()
    } finally {
      await handle.close()
    }
  })
  if (E.isLeft(written)) {
    await removeQuietly(temp)
    return written
  }
  return E.right(temp)
}

/**
 * Creates `target` only if it does not exist, with its full content visible at once: a fsynced
 * temp file is `link`ed to it (link fails with EEXIST instead of replacing, unlike rename).
 * The caller persists the directory chain.
 * @category constructors
 */
export const exclusiveCreate = async (target: string, bytes: Uint8Array): Outcome<'created' | 'exists'> => {
  const temp = await writeTemp(target, bytes, true)
  if (E.isLeft(temp)) return temp
  const linked = await attempt('link', target, () => link(temp.right, target))
  await removeQuietly(temp.right)
  if (E.isRight(linked)) return E.right('created')
  return isErrno(linked.left, 'EEXIST') ? E.right('exists') : linked
}

/**
 * Replaces `target` atomically (temp file + rename); `sync` fsyncs the content before the rename.
 * The caller persists the directory entry when it needs durability.
 * @category constructors
 */
export const atomicReplace = async (target: string, bytes: Uint8Array, sync: boolean): Outcome<void> => {
  const temp = await writeTemp(target, bytes, sync)
  if (E.isLeft(temp)) return temp
  const renamed = await attempt('rename', target, () => rename(temp.right, target))
  if (E.isLeft(renamed)) await removeQuietly(temp.right)
  return renamed
}

/**
 * Removes a file; an already missing file counts as removed.
 * @category constructors
 */
export const removeFile = async (path: string): Outcome<void> => {
  const removed = await attempt('unlink', path, () => unlink(path))
  return E.isLeft(removed) && isErrno(removed.left, 'ENOENT') ? E.right(undefined) : removed
}

/**
 * Serializes a record as its file content: indented JSON with a final newline.
 * @category constructors
 */
export const recordBytes = (record: unknown): Buffer => Buffer.from(`${JSON.stringify(record, null, 2)}\n`, 'utf8')
