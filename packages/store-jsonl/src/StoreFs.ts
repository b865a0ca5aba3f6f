/**
 * The filesystem port of the file stores: the few calls they make, and nothing else. The default is
 * node's, with only what waits on the disk in its thread pool; a test passes a port that fails one
 * chosen call with a chosen errno (`makeFaultInjectingFs`), so every write step can be proven to fail
 * closed without filling a disk. `syncStoreFs` makes the same calls synchronously, for a
 * short-lived command (decision 68).
 */
import * as fs from 'node:fs'
import type { Dirent } from 'node:fs'
import * as fsp from 'node:fs/promises'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * An open file (or directory, for fsync) as the stores use it.
 * @category models
 */
export interface StoreFile {
  readonly write: (buffer: Uint8Array, offset: number, length: number) => Promise<{ readonly bytesWritten: number }>
  readonly read: (
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number | null,
  ) => Promise<{ readonly bytesRead: number }>
  /** `nlink` is 0 once the file has no name left (removed, or replaced by a rename over its path). */
  readonly stat: () => Promise<{ readonly size: number; readonly mode: number; readonly nlink: number }>
  readonly truncate: (length: number) => Promise<void>
  readonly sync: () => Promise<void>
  readonly chmod: (mode: number) => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * What `lstat` tells the stores about an entry.
 * @category models
 */
export interface StoreEntryStat {
  readonly isDirectory: () => boolean
  readonly isSymbolicLink: () => boolean
}

/**
 * The filesystem calls of the stores. `mkdir` is never recursive: the stores create each folder
 * themselves so that each gets its mode and none is created through a symbolic link.
 * @category models
 */
export interface StoreFs {
  readonly open: (path: string, flags: number, mode?: number) => Promise<StoreFile>
  readonly link: (existing: string, target: string) => Promise<void>
  readonly rename: (from: string, to: string) => Promise<void>
  readonly mkdir: (path: string, mode: number) => Promise<void>
  readonly chmod: (path: string, mode: number) => Promise<void>
  readonly unlink: (path: string) => Promise<void>
  readonly readdir: (path: string) => Promise<ReadonlyArray<Dirent>>
  readonly lstat: (path: string) => Promise<StoreEntryStat>
  readonly realpath: (path: string) => Promise<string>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

// A closed descriptor number can be reused by the next open: a call on a closed file must never reach it.
const badDescriptor = (syscall: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`EBADF: file already closed, ${syscall}`), { code: 'EBADF', errno: -9, syscall })

// A synchronous call as a promise: its throw becomes the rejection.
const settle = <A>(call: () => A): Promise<A> => new Promise((resolve) => resolve(call()))

// A call through libuv's thread pool as a promise.
const pooled = <A>(call: (done: (error: NodeJS.ErrnoException | null, value?: A) => void) => void): Promise<A> =>
  new Promise((resolve, reject) => {
    call((error, value) => (error === null ? resolve(value as A) : reject(error)))
  })

// The calls on a file that may wait on the disk, made through the thread pool or synchronously.
interface DiskCalls {
  readonly read: (
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number | null,
  ) => Promise<number>
  readonly truncate: (fd: number, length: number) => Promise<void>
  readonly sync: (fd: number) => Promise<void>
}

// A file as a descriptor of our own. A row's write (into the page cache), an fstat, an fchmod and a
// close take microseconds on the caller's thread; what may wait on the disk is `disk`'s.
const descriptorFile = (fd: number, disk: DiskCalls): StoreFile => {
  let open = true
  const live = (syscall: string): number => {
    if (!open) throw badDescriptor(syscall)
    return fd
  }
  return {
    write: async (buffer, offset, length) => {
      // A turn of the event loop first, as a write through the pool gave, so a signal that arrives
      // while the stores work (a second Ctrl+C) is handled before more data lands (decision 68).
      await new Promise<void>((resolve) => setImmediate(resolve))
      return { bytesWritten: fs.writeSync(live('write'), buffer, offset, length) }
    },
    read: async (buffer, offset, length, position) => ({
      bytesRead: await disk.read(live('read'), buffer, offset, length, position),
    }),
    stat: () => settle(() => fs.fstatSync(live('fstat'))),
    truncate: (length) => disk.truncate(live('ftruncate'), length),
    sync: () => disk.sync(live('fsync')),
    chmod: (mode) => settle(() => fs.fchmodSync(live('fchmod'), mode)),
    close: () =>
      settle(() => {
        if (!open) return
        open = false
        fs.closeSync(fd)
      }),
  }
}

// Only what waits on the disk (fsync, truncate, reads) goes through the pool, so the event loop never
// waits for the disk, and nothing else pays a round trip through it (decisions 173, 287).
const poolCalls: DiskCalls = {
  read: (fd, buffer, offset, length, position) =>
    pooled<number>((done) => fs.read(fd, buffer, offset, length, position, done)),
  truncate: (fd, length) => pooled<void>((done) => fs.ftruncate(fd, length, done)),
  sync: (fd) => pooled<void>((done) => fs.fsync(fd, done)),
}

const syncCalls: DiskCalls = {
  read: (fd, buffer, offset, length, position) => settle(() => fs.readSync(fd, buffer, offset, length, position)),
  truncate: (fd, length) => settle(() => fs.ftruncateSync(fd, length)),
  sync: (fd) => settle(() => fs.fsyncSync(fd)),
}

// Opens that create or write a file, or take a folder's handle to fsync it, name an entry the stores
// have just looked up or changed; an open to read may have to read its folder from the disk first.
const WRITES = fs.constants.O_WRONLY | fs.constants.O_RDWR | fs.constants.O_CREAT | (fs.constants.O_DIRECTORY ?? 0)

// Calls that change a folder's entries in memory, on the caller's thread in both ports.
const entryCalls: Pick<StoreFs, 'link' | 'rename' | 'mkdir' | 'chmod' | 'unlink'> = {
  link: (existing, target) => settle(() => fs.linkSync(existing, target)),
  rename: (from, to) => settle(() => fs.renameSync(from, to)),
  mkdir: (path, mode) =>
    settle(() => {
      fs.mkdirSync(path, { mode })
    }),
  chmod: (path, mode) => settle(() => fs.chmodSync(path, mode)),
  unlink: (path) => settle(() => fs.unlinkSync(path)),
}

/**
 * The real filesystem for a process that must stay responsive: whatever waits on the disk (fsync,
 * reads, opens of files to read) goes through libuv's thread pool; a file's `write`, `stat`, `chmod`
 * and `close`, and `link`, `rename`, `mkdir`, `chmod` and `unlink`, run on the caller's thread.
 * @category constructors
 */
export const nodeStoreFs: StoreFs = {
  open: async (path, flags, mode) =>
    descriptorFile(
      (flags & WRITES) !== 0
        ? fs.openSync(path, flags, mode)
        : await pooled<number>((done) => fs.open(path, flags, mode, done)),
      poolCalls,
    ),
  ...entryCalls,
  readdir: (path) => fsp.readdir(path, { withFileTypes: true }),
  lstat: (path) => fsp.lstat(path),
  realpath: (path) => fsp.realpath(path),
}

/**
 * The real filesystem through node's synchronous calls, behind the same promises (a failure is a
 * rejection with the same errno). Each call runs on the caller's thread instead of a round trip
 * through libuv's thread pool; the stores make the same calls in the same order, so what is durable,
 * and when, does not change. It blocks the event loop for the length of each call (an fsync
 * included), and gives it a turn before each write: for a command that runs and exits, not for a process
 * that must stay responsive.
 * @category constructors
 */
export const syncStoreFs: StoreFs = {
  open: (path, flags, mode) => settle(() => descriptorFile(fs.openSync(path, flags, mode), syncCalls)),
  ...entryCalls,
  readdir: (path) => settle(() => fs.readdirSync(path, { withFileTypes: true })),
  lstat: (path) => settle(() => fs.lstatSync(path)),
  realpath: (path) => settle(() => fs.realpathSync.native(path)),
}
