/**
 * A filesystem port for fault-injection tests: it passes every call to another port, except the
 * calls an armed fault matches, which fail the way node fails them (an `Error` with `code`,
 * `errno` and `syscall`) — so ENOSPC, EIO, EACCES or EROFS can be put on one chosen step (the link
 * that creates `owner.lock`, the fsync of a ledger, the rename of a header) of a real store.
 */
import { constants } from 'node:os'
import type { StoreFile, StoreFs } from './StoreFs.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A call a fault can be put on. Handle calls (`write`, `fsync`, …) match the path the handle was
 * opened with; `link` and `rename` match their target.
 * @category models
 */
export type FsCall =
  | 'open'
  | 'write'
  | 'read'
  | 'fstat'
  | 'truncate'
  | 'fsync'
  | 'fchmod'
  | 'close'
  | 'link'
  | 'rename'
  | 'mkdir'
  | 'chmod'
  | 'unlink'
  | 'readdir'
  | 'lstat'
  | 'realpath'

/**
 * One injected failure.
 * @category models
 */
export interface Fault {
  readonly call: FsCall
  /** The errno name the call fails with (`ENOSPC`, `EIO`, `EACCES`, `EROFS`, …). */
  readonly code: string
  /** Only calls on a matching path; every path when absent. */
  readonly path?: RegExp
  /** Matching calls let through before the first failure (default 0). */
  readonly skip?: number
  /** How many matching calls fail (default: all of them). */
  readonly times?: number
}

/**
 * The fault-injecting port with its controls.
 * @category models
 */
export interface FaultInjectingFs extends StoreFs {
  /** Replaces the armed faults. */
  arm(...faults: ReadonlyArray<Fault>): void
  /** Removes every armed fault. */
  disarm(): void
  /** Every call that was failed, in order. */
  readonly injected: ReadonlyArray<{ readonly call: FsCall; readonly path: string; readonly code: string }>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const errnoOf = (code: string): number => {
  const table = constants.errno as Record<string, number | undefined>
  return -(table[code] ?? 5)
}

/**
 * Wraps a port (node's by default in tests) so armed faults fail their matching calls.
 * @category constructors
 */
export const makeFaultInjectingFs = (base: StoreFs, faults: ReadonlyArray<Fault> = []): FaultInjectingFs => {
  let armed = faults.map((fault) => ({ fault, seen: 0, failed: 0 }))
  const injected: Array<{ call: FsCall; path: string; code: string }> = []

  const check = (call: FsCall, path: string): void => {
    for (const entry of armed) {
      const { fault } = entry
      if (fault.call !== call || (fault.path !== undefined && !fault.path.test(path))) continue
      entry.seen += 1
      if (entry.seen <= (fault.skip ?? 0)) continue
      if (fault.times !== undefined && entry.failed >= fault.times) continue
      entry.failed += 1
      injected.push({ call, path, code: fault.code })
      throw Object.assign(new Error(`${fault.code}: injected fault, ${call} '${path}'`), {
        code: fault.code,
        errno: errnoOf(fault.code),
        syscall: call,
        path,
      })
    }
  }

  // `pathAt` picks the argument that names the path: the target for link and rename.
  const guard =
    <A extends Array<unknown>, B>(call: FsCall, pathAt: number | string, f: (...args: A) => Promise<B>) =>
    async (...args: A): Promise<B> => {
      check(call, typeof pathAt === 'string' ? pathAt : String(args[pathAt]))
      return f(...args)
    }

  const wrapFile = (path: string, file: StoreFile): StoreFile => {
    return {
      write: guard('write', path, file.write),
      read: guard('read', path, file.read),
      stat: guard('fstat', path, file.stat),
      truncate: guard('truncate', path, file.truncate),
      sync: guard('fsync', path, file.sync),
      chmod: guard('fchmod', path, file.chmod),
      close: async () => {
        // The descriptor is released even when the close is reported failed, as the kernel does.
        await file.close()
        check('close', path)
      },
    }
  }

  return {
    open: async (path, flags, mode) => {
      check('open', path)
      return wrapFile(path, await base.open(path, flags, mode))
    },
    link: guard('link', 1, base.link),
    rename: guard('rename', 1, base.rename),
    mkdir: guard('mkdir', 0, base.mkdir),
    chmod: guard('chmod', 0, base.chmod),
    unlink: guard('unlink', 0, base.unlink),
    readdir: guard('readdir', 0, base.readdir),
    lstat: guard('lstat', 0, base.lstat),
    realpath: guard('realpath', 0, base.realpath),
    arm: (...next) => {
      armed = next.map((fault) => ({ fault, seen: 0, failed: 0 }))
    },
    disarm: () => {
      armed = []
    },
    injected,
  }
}
