/**
 * The filesystem port of the file stores: the few calls they make, and nothing else. The default is
 * node's `fs/promises`; a test passes a port that fails one chosen call with a chosen errno
 * (`makeFaultInjectingFs`), so every write step can be proven to fail closed without filling a disk.
 */
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
  readonly stat: () => Promise<{ readonly size: number; readonly mode: number }>
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

const nodeFile = (handle: fsp.FileHandle): StoreFile => ({
  write: (buffer, offset, length) => handle.write(buffer, offset, length),
  read: (buffer, offset, length, position) => handle.read(buffer, offset, length, position),
  stat: () => handle.stat(),
  truncate: (length) => handle.truncate(length),
  sync: () => handle.sync(),
  chmod: (mode) => handle.chmod(mode),
  close: () => handle.close(),
})

/**
 * The real filesystem.
 * @category constructors
 */
export const nodeStoreFs: StoreFs = {
  open: async (path, flags, mode) => nodeFile(await fsp.open(path, flags, mode)),
  link: (existing, target) => fsp.link(existing, target),
  rename: (from, to) => fsp.rename(from, to),
  mkdir: async (path, mode) => {
    await fsp.mkdir(path, { mode })
  },
  chmod: (path, mode) => fsp.chmod(path, mode),
  unlink: (path) => fsp.unlink(path),
  readdir: (path) => fsp.readdir(path, { withFileTypes: true }),
  lstat: (path) => fsp.lstat(path),
  realpath: (path) => fsp.realpath(path),
}
