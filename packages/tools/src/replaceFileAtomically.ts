/**
 * All-or-nothing file replacement for `write_file`. Writing the target in place (truncate, then
 * write) leaves it empty or half written when the process dies in between, and the reconcile probe
 * can then only answer `diverged`. Instead the bytes go to a temp file beside the target, which is
 * fsynced and renamed over it — `rename` swaps the directory entry in one step — and the folder is
 * fsynced so the new entry survives a power loss too. A crash at any instant leaves the old bytes or
 * the new ones.
 */
import { randomBytes } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { access, lstat, mkdir, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises'
import * as nodePath from 'node:path'
import { errorCode } from './ToolFailure.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

// A target this module will not replace, with the errno-like code the failure sentence is built from.
class RefusedTarget extends Error {
  constructor(readonly code: 'ELOOP' | 'EISDIR' | 'NOT_REGULAR_FILE') {
    super(code)
  }
}

// O_EXCL: a name that exists already (a link planted at the temp path included) is never written through.
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW
// What `fs.writeFile` used for a new file before, so the umask still decides a new file's mode.
const NEW_FILE_MODE = 0o666
// Set-id bits are not carried: a write by a process without CAP_FSETID cleared them before as well.
const PERMISSION_BITS = 0o777
const TEMP_SUFFIX = '.write_file.tmp'
// NAME_MAX is 255 bytes; the temp name adds at most 37 to the target's (two dots, a pid of up to 7
// digits, a dot, 12 hex digits, the suffix), so a long target name is cut to keep the temp name legal.
const TEMP_BASE_MAX_BYTES = 200

// -------------------------------------------------------------------------------------
// temp names
// -------------------------------------------------------------------------------------

const tempBase = (target: string): string => {
  const chars = Array.from(nodePath.basename(target))
  while (Buffer.byteLength(chars.join('')) > TEMP_BASE_MAX_BYTES) chars.pop()
  return chars.join('')
}

// The pid lets a later write tell a temp whose writer died from one still being written.
const tempPathFor = (target: string): string =>
  nodePath.join(
    nodePath.dirname(target),
    `.${tempBase(target)}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`,
  )

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const tempPatternFor = (target: string): RegExp =>
  new RegExp(`^${escapeRegExp(`.${tempBase(target)}.`)}(\\d+)\\.[0-9a-f]{12}${escapeRegExp(TEMP_SUFFIX)}$`)

// EPERM means the pid exists but belongs to someone else: alive, so its temp is left alone.
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (cause) {
    return errorCode(cause) === 'EPERM'
  }
}

/**
 * Removes the temps of `target` whose writer is gone — left by a crash between open and rename.
 * Best effort: a temp that cannot be removed is harmless, so nothing here fails the write.
 */
const removeStaleTemps = async (target: string): Promise<void> => {
  const folder = nodePath.dirname(target)
  const pattern = tempPatternFor(target)
  let names: Array<string>
  try {
    names = await readdir(folder)
  } catch {
    return
  }
  for (const name of names) {
    const pid = Number(pattern.exec(name)?.[1])
    // pid 0 and below would signal process groups, not a process.
    if (!Number.isSafeInteger(pid) || pid <= 0 || isAlive(pid)) continue
    await unlink(nodePath.join(folder, name)).catch(() => undefined)
  }
}

// -------------------------------------------------------------------------------------
// steps
// -------------------------------------------------------------------------------------

/**
 * The target as it is now: `undefined` when it does not exist yet. `target` was resolved through
 * its links already, so a link found here appeared since and is refused, as `O_NOFOLLOW` refused it
 * before (rename would replace the link rather than write through it, but silently turning a link
 * into a file is not what was asked). Anything but a regular file is refused too: rename would swap
 * a FIFO or device for a file, where the in-place write fed it (or hung on a FIFO without a reader).
 */
const currentTarget = async (target: string): Promise<Stats | undefined> => {
  let stat: Stats
  try {
    stat = await lstat(target)
  } catch (cause) {
    if (errorCode(cause) === 'ENOENT') return undefined
    throw cause
  }
  if (stat.isSymbolicLink()) throw new RefusedTarget('ELOOP')
  if (stat.isDirectory()) throw new RefusedTarget('EISDIR')
  if (!stat.isFile()) throw new RefusedTarget('NOT_REGULAR_FILE')
  // Rename needs only the folder to be writable; a file the process may not write stays refused (EACCES).
  await access(target, constants.W_OK)
  return stat
}

const fsyncFolder = async (folder: string): Promise<void> => {
  const handle = await open(folder, constants.O_RDONLY | constants.O_DIRECTORY)
  try {
    await handle.sync()
  } catch (cause) {
    // Some file systems cannot fsync a folder; the rename is done and there is nothing more to ask for.
    if (errorCode(cause) !== 'EINVAL' && errorCode(cause) !== 'ENOTSUP') throw cause
  } finally {
    await handle.close()
  }
}

/**
 * Folders whose entries changed: the target's, and the parent of each folder `mkdir` created, from
 * the deepest up, so every new entry on the way to the target is durable.
 */
const foldersToSync = (folder: string, firstCreated: string | undefined): ReadonlyArray<string> => {
  const folders = [folder]
  if (firstCreated === undefined) return folders
  for (let created = folder; ; created = nodePath.dirname(created)) {
    const parent = nodePath.dirname(created)
    if (parent === created) break
    folders.push(parent)
    if (created === firstCreated) break
  }
  return folders
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Replaces (or creates) the file at the already-confined path `target` with `content`, creating its
 * missing parent folders. Rejects with the file system's error; the target then holds its old bytes
 * (or is still absent) and this call's temp file is removed. Only a folder fsync failing after the
 * rename leaves the new bytes in place behind a rejection.
 * @category constructors
 */
export const replaceFileAtomically = async (target: string, content: string): Promise<void> => {
  const folder = nodePath.dirname(target)
  const firstCreated = await mkdir(folder, { recursive: true })
  const existing = await currentTarget(target)
  const temp = tempPathFor(target)
  let handle: FileHandle | undefined
  let created = false
  try {
    handle = await open(temp, TEMP_FLAGS, NEW_FILE_MODE)
    created = true
    if (existing !== undefined) {
      // Best effort: only root may give a file away, and a root-run agent should not take over the
      // user's files. chown first, because it may clear mode bits that chmod then sets.
      await handle.chown(existing.uid, existing.gid).catch(() => undefined)
      await handle.chmod(existing.mode & PERMISSION_BITS)
    }
    await handle.writeFile(content)
    await handle.sync()
    const closing = handle
    handle = undefined
    await closing.close()
    await rename(temp, target)
  } catch (cause) {
    await handle?.close().catch(() => undefined)
    // Only a temp this call created is removed: with O_EXCL, an open that failed names someone else's file.
    if (created) await unlink(temp).catch(() => undefined)
    throw cause
  }
  for (const changed of foldersToSync(folder, firstCreated)) await fsyncFolder(changed)
  await removeStaleTemps(target)
}
