/**
 * The filesystem primitives every store is built from, each wrapped so that no fs call can throw
 * past it: a failure becomes a typed `StoreError` in an `Either`. Also the two crash-safe write
 * patterns of docs/contract.md §1 — exclusive create (temp file + `link`) and replace (temp file +
 * `rename`) — and the directory fsyncs that make a new or renamed entry survive a power loss.
 */
import { randomBytes } from 'node:crypto'
import { constants, type Dirent } from 'node:fs'
import { basename, dirname, join, relative, sep } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { ioFailed, notFound, symlinkInDataDir, unreadable, withSubject, type StoreError } from '@maka/stores'
import { nodeStoreFs, type StoreEntryStat, type StoreFile, type StoreFs } from '../StoreFs.js'

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
  readonly fs: StoreFs
  readonly dirSync: DirSync
  /** Folders below the data dir this instance has seen to be real folders (not links). */
  readonly confined: Set<string>
}

/** New files hold prompts and tool results: owner-only, whatever the umask. */
const FILE_MODE = 0o600
const DIR_MODE = 0o700
const NOFOLLOW = constants.O_NOFOLLOW ?? 0
const DIRECTORY = constants.O_DIRECTORY ?? 0

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
 * Lifts an internal step to the public `TaskEither`, naming what the store was doing in an
 * `IoFailed` that does not name it yet; the catch is a last guard so that even a bug does not
 * reject across the package boundary.
 * @category constructors
 */
export const toTask =
  <A>(f: () => Outcome<A>, subject?: () => string): TE.TaskEither<StoreError, A> =>
  () =>
    f()
      .catch((cause: unknown) => E.left(ioFailed('unexpected failure in', '(store)', cause)))
      .then((result) =>
        E.isLeft(result) && subject !== undefined && hasDefaultSubject(result.left)
          ? E.left(withSubject(result.left, subject()))
          : result,
      )

// An inner step (the header part of a claim) may have named its subject already; keep it.
const hasDefaultSubject = (e: StoreError): boolean => e._tag === 'IoFailed' && e.subject === `${e.operation} ${e.path}`

/**
 * Names the subject of an inner step's failure; an outer `toTask` keeps it.
 * @category constructors
 */
export const inSubject = async <A>(subject: string, outcome: Outcome<A>): Outcome<A> => {
  const result = await outcome
  return E.isLeft(result) && hasDefaultSubject(result.left) ? E.left(withSubject(result.left, subject)) : result
}

/**
 * Creates the shared context of one store instance rooted at an absolute data dir.
 * @category constructors
 */
export const makeStoreContext = (dataDir: string, fs: StoreFs = nodeStoreFs): StoreContext => ({
  dataDir,
  fs,
  dirSync: makeDirSync(dataDir, fs),
  confined: new Set<string>(),
})

const makeDirSync = (root: string, fs: StoreFs): DirSync => {
  const durable = new Set<string>()
  return {
    persist: async (path, options) => {
      const walked: Array<string> = []
      let entry = path
      let force = options?.replaced === true
      while (entry !== root && (force || !durable.has(entry))) {
        const parent = dirname(entry)
        if (parent === entry) break
        const synced = await fsyncDir(fs, parent)
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
// confinement
// -------------------------------------------------------------------------------------

const lstatOrNull = async (fs: StoreFs, path: string): Outcome<StoreEntryStat | null> => {
  const found = await attempt('lstat', path, () => fs.lstat(path))
  return E.isLeft(found) && isErrno(found.left, 'ENOENT') ? E.right(null) : found
}

const isInside = (root: string, path: string): boolean => path === root || path.startsWith(`${root}${sep}`)

// The error for a link found at `path`, saying whether it leads outside the data dir.
const linkRefused = async (context: StoreContext, path: string): Outcome<never> => {
  const { fs, dataDir } = context
  let leadsOutside = true
  try {
    leadsOutside = !isInside(await fs.realpath(dataDir), await fs.realpath(path))
  } catch {
    // A dangling link, or a data dir that vanished: it leads nowhere we can vouch for.
  }
  return E.left(symlinkInDataDir(path, relative(dataDir, path), leadsOutside))
}

// The folders from the data dir's first child down to `dir` (none for the data dir itself).
const foldersBelowRoot = (root: string, dir: string): ReadonlyArray<string> => {
  const chain: Array<string> = []
  for (let at = dir; at !== root && isInside(root, at); at = dirname(at)) chain.unshift(at)
  return chain
}

/**
 * Checks that no existing folder from the data dir down to `dir` is a symbolic link. The data dir
 * itself may be one (a user's choice); everything the product keeps below it must be real, so a
 * `claims/`, run or session folder linked elsewhere is refused instead of written through.
 * @category guards
 */
export const confineDir = async (context: StoreContext, dir: string): Outcome<void> => {
  for (const folder of foldersBelowRoot(context.dataDir, dir)) {
    if (context.confined.has(folder)) continue
    const found = await lstatOrNull(context.fs, folder)
    if (E.isLeft(found)) return found
    // Missing: nothing below exists either, and makeDirs creates real folders only.
    if (found.right === null) return E.right(undefined)
    if (found.right.isSymbolicLink()) return linkRefused(context, folder)
    if (found.right.isDirectory()) context.confined.add(folder)
  }
  return E.right(undefined)
}

// Answers whether this call created the folder (false: it already existed).
const makeOneDir = async (context: StoreContext, dir: string): Outcome<boolean> => {
  const made = await attempt('mkdir', dir, () => context.fs.mkdir(dir, DIR_MODE))
  if (E.isLeft(made)) return isErrno(made.left, 'EEXIST') ? E.right(false) : made
  // mkdir's mode is filtered by the umask; the folder must be owner-only whatever the umask is.
  const chmodded = await attempt('chmod', dir, () => context.fs.chmod(dir, DIR_MODE))
  return E.isLeft(chmodded) ? chmodded : E.right(true)
}

/**
 * `mkdir -p` below the data dir: every missing folder is created 0700, one at a time, and every
 * existing one is checked not to be a link. A missing data dir is created too (0700).
 * @category constructors
 */
export const makeDirs = async (context: StoreContext, dir: string): Outcome<void> => {
  const { dataDir, fs } = context
  if (!context.confined.has(dataDir)) {
    const root = await lstatOrNull(fs, dataDir)
    if (E.isLeft(root)) return root
    if (root.right === null) {
      const missing: Array<string> = []
      for (let at = dataDir; ; at = dirname(at)) {
        const found = await lstatOrNull(fs, at)
        if (E.isLeft(found)) return found
        if (found.right !== null || dirname(at) === at) break
        missing.unshift(at)
      }
      for (const folder of missing) {
        const made = await makeOneDir(context, folder)
        if (E.isLeft(made)) return made
      }
    }
    context.confined.add(dataDir)
  }
  for (const folder of foldersBelowRoot(dataDir, dir)) {
    if (context.confined.has(folder)) continue
    const found = await lstatOrNull(fs, folder)
    if (E.isLeft(found)) return found
    if (found.right === null) {
      const made = await makeOneDir(context, folder)
      if (E.isLeft(made)) return made
      // Created concurrently by someone else, maybe as a link: check what is there now.
      if (!made.right) {
        const now = await lstatOrNull(fs, folder)
        if (E.isLeft(now)) return now
        if (now.right?.isSymbolicLink() === true) return linkRefused(context, folder)
      }
    } else if (found.right.isSymbolicLink()) {
      return linkRefused(context, folder)
    }
    context.confined.add(folder)
  }
  return E.right(undefined)
}

/**
 * Opens a file below the data dir without following a link at any step: its folders are checked
 * by `confineDir`, the file itself is opened with `O_NOFOLLOW`.
 * @category constructors
 */
export const openConfined = async (
  context: StoreContext,
  operation: string,
  path: string,
  flags: number,
): Outcome<StoreFile> => {
  const confined = await confineDir(context, dirname(path))
  if (E.isLeft(confined)) return confined
  const opened = await attempt(operation, path, () => context.fs.open(path, flags | NOFOLLOW, FILE_MODE))
  if (E.isRight(opened) || !isErrno(opened.left, 'ELOOP')) return opened
  const found = await lstatOrNull(context.fs, path)
  return E.isRight(found) && found.right?.isSymbolicLink() === true ? linkRefused(context, path) : opened
}

// -------------------------------------------------------------------------------------
// reading
// -------------------------------------------------------------------------------------

/**
 * Reads a whole file; a missing file is `NotFound`.
 * @category constructors
 */
export const readBytes = async (context: StoreContext, path: string): Outcome<Buffer> => {
  const opened = await openConfined(context, 'read', path, constants.O_RDONLY)
  if (E.isLeft(opened)) return isErrno(opened.left, 'ENOENT') ? E.left(notFound(path)) : opened
  const file = opened.right
  const read = await attempt('read', path, async () => {
    const chunks: Array<Buffer> = []
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024)
      const { bytesRead } = await file.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) return Buffer.concat(chunks)
      chunks.push(chunk.subarray(0, bytesRead))
    }
  })
  // A close failure after a complete read changes nothing that was read.
  await file.close().catch(() => undefined)
  return read
}

/**
 * Reads and decodes a JSON record file: missing → `NotFound`, bad JSON or shape → `Unreadable`.
 * @category constructors
 */
export const readRecord = async <A>(
  context: StoreContext,
  path: string,
  decode: (u: unknown) => E.Either<string, A>,
): Outcome<A> => {
  const bytes = await readBytes(context, path)
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
 * True when `path` exists; a link there is `SymlinkInDataDir`.
 * @category constructors
 */
export const pathExists = async (context: StoreContext, path: string): Outcome<boolean> => {
  const confined = await confineDir(context, dirname(path))
  if (E.isLeft(confined)) return confined
  const found = await lstatOrNull(context.fs, path)
  if (E.isLeft(found)) return found
  if (found.right?.isSymbolicLink() === true) return linkRefused(context, path)
  return E.right(found.right !== null)
}

/**
 * The entries of a directory; a missing directory has none.
 * @category constructors
 */
export const listDir = async (context: StoreContext, path: string): Outcome<ReadonlyArray<Dirent>> => {
  const confined = await confineDir(context, path)
  if (E.isLeft(confined)) return confined
  const entries = await attempt('list', path, () => context.fs.readdir(path))
  return E.isLeft(entries) && isErrno(entries.left, 'ENOENT') ? E.right([]) : entries
}

// -------------------------------------------------------------------------------------
// writing
// -------------------------------------------------------------------------------------

/**
 * fsyncs a directory, which makes the entries created or renamed in it durable.
 * @category constructors
 */
export const fsyncDir = async (fs: StoreFs, path: string): Outcome<void> => {
  const opened = await attempt('fsync', path, () => fs.open(path, constants.O_RDONLY | DIRECTORY))
  if (E.isLeft(opened)) return opened
  const synced = await attempt('fsync', path, () => opened.right.sync())
  await opened.right.close().catch(() => undefined)
  return synced
}

// The leading dot keeps temp files out of every listing: no safe id starts with one.
const tempPathFor = (target: string): string =>
  join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)

const removeQuietly = async (context: StoreContext, path: string): Promise<void> => {
  // A leftover temp file is harmless (listings skip it), so a failed cleanup is not an error.
  await attempt('unlink', path, () => context.fs.unlink(path))
}

/**
 * Writes all of `bytes` at the file's position, looping over short writes.
 * @category constructors
 */
export const writeAll = async (file: StoreFile, bytes: Uint8Array): Promise<void> => {
  let offset = 0
  while (offset < bytes.length) {
    const { bytesWritten } = await file.write(bytes, offset, bytes.length - offset)
    if (bytesWritten <= 0) throw Object.assign(new Error('the write made no progress'), { code: 'SHORT_WRITE' })
    offset += bytesWritten
  }
}

const writeTemp = async (context: StoreContext, target: string, bytes: Uint8Array, sync: boolean): Outcome<string> => {
  const temp = tempPathFor(target)
  const opened = await attempt('open', temp, () =>
    context.fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, FILE_MODE),
  )
  if (E.isLeft(opened)) return opened
  const file = opened.right
  const steps = async (): Outcome<void> => {
    // The mode given to open is filtered by the umask; the file must be owner-only whatever it is.
    const chmodded = await attempt('chmod', temp, () => file.chmod(FILE_MODE))
    if (E.isLeft(chmodded)) return chmodded
    const written = await attempt('write', temp, () => writeAll(file, bytes))
    if (E.isLeft(written)) return written
    return sync ? attempt('fsync', temp, () => file.sync()) : E.right(undefined)
  }
  const done = await steps()
  const closed = await attempt('close', temp, () => file.close())
  const result = E.isLeft(done) ? done : closed
  if (E.isLeft(result)) {
    await removeQuietly(context, temp)
    return result
  }
  return E.right(temp)
}

/**
 * Creates `target` only if it does not exist, with its full content visible at once: a fsynced
 * temp file is `link`ed to it (link fails with EEXIST instead of replacing, unlike rename).
 * The caller persists the directory chain.
 * @category constructors
 */
export const exclusiveCreate = async (
  context: StoreContext,
  target: string,
  bytes: Uint8Array,
): Outcome<'created' | 'exists'> => {
  const confined = await confineDir(context, dirname(target))
  if (E.isLeft(confined)) return confined
  const temp = await writeTemp(context, target, bytes, true)
  if (E.isLeft(temp)) return temp
  const linked = await attempt('link', target, () => context.fs.link(temp.right, target))
  await removeQuietly(context, temp.right)
  if (E.isRight(linked)) return E.right('created')
  return isErrno(linked.left, 'EEXIST') ? E.right('exists') : linked
}

/**
 * Replaces `target` atomically (temp file + rename); `sync` fsyncs the content before the rename.
 * The caller persists the directory entry when it needs durability.
 * @category constructors
 */
export const atomicReplace = async (
  context: StoreContext,
  target: string,
  bytes: Uint8Array,
  sync: boolean,
): Outcome<void> => {
  const confined = await confineDir(context, dirname(target))
  if (E.isLeft(confined)) return confined
  const temp = await writeTemp(context, target, bytes, sync)
  if (E.isLeft(temp)) return temp
  const renamed = await attempt('rename', target, () => context.fs.rename(temp.right, target))
  if (E.isLeft(renamed)) await removeQuietly(context, temp.right)
  return renamed
}

/**
 * Removes a file; an already missing file counts as removed.
 * @category constructors
 */
export const removeFile = async (context: StoreContext, path: string): Outcome<void> => {
  const confined = await confineDir(context, dirname(path))
  if (E.isLeft(confined)) return confined
  const removed = await attempt('unlink', path, () => context.fs.unlink(path))
  return E.isLeft(removed) && isErrno(removed.left, 'ENOENT') ? E.right(undefined) : removed
}

/**
 * Serializes a record as its file content: indented JSON with a final newline.
 * @category constructors
 */
export const recordBytes = (record: unknown): Buffer => Buffer.from(`${JSON.stringify(record, null, 2)}\n`, 'utf8')
