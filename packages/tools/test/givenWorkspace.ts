/**
 * Test support: a real temp workspace next to a real "outside" folder, a tool context over it with
 * an in-memory shell-run recorder, and process probes. Everything a test starts is tracked so
 * `cleanup` (in `afterEach`) can end it and remove the folders, whatever the test did.
 */
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import * as E from 'fp-ts/lib/Either.js'
import type { ShellRun } from '@maka/events'
import { processIdentity } from '@maka/host-inspector'
import type { ShellRunRecorder, ToolContext } from '../src/index.js'

/**
 * A recorder that keeps every record it is given, in order.
 * @category unsafe
 */
export interface MemoryRecorder extends ShellRunRecorder {
  readonly records: ReadonlyArray<ShellRun>
  waitFor(predicate: (run: ShellRun) => boolean, timeoutMs?: number): Promise<ShellRun>
}

/**
 * Builds a recorder that keeps records in memory.
 * @category unsafe
 */
export const makeMemoryRecorderUnsafe = (): MemoryRecorder => {
  const records: Array<ShellRun> = []
  return {
    records,
    record: (run) => () => {
      records.push(run)
      return Promise.resolve(E.right(undefined))
    },
    waitFor: async (predicate, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const found = records.find(predicate)
        if (found !== undefined) return found
        if (Date.now() > deadline) throw new Error(`no matching shell-run record in ${JSON.stringify(records)}`)
        await delay(20)
      }
    },
  }
}

/**
 * A workspace, an outside folder and a context; `track` registers pids for `cleanup`.
 * @category unsafe
 */
export interface Workspace {
  /** The canonical workspace root. */
  readonly root: string
  /** A sibling folder that no tool may touch. */
  readonly outside: string
  readonly recorder: MemoryRecorder
  readonly context: ToolContext
  contextWith(overrides: Partial<ToolContext>): ToolContext
  track(pid: number): void
  /** Sorted recursive listing of `outside`, with file contents, to prove it did not change. */
  snapshotOutside(): Promise<string>
  cleanup(): Promise<void>
}

/**
 * Creates a fresh workspace under the OS temp dir.
 * @category unsafe
 */
export const givenWorkspaceUnsafe = async (): Promise<Workspace> => {
  const base = await realpath(await mkdtemp(path.join(tmpdir(), 'maka-tools-')))
  const root = path.join(base, 'workspace')
  const outside = path.join(base, 'outside')
  await mkdir(root)
  await mkdir(outside)
  await writeFile(path.join(outside, 'secret.txt'), 'outside\n')
  const recorder = makeMemoryRecorderUnsafe()
  const pids: Array<number> = []
  const context: ToolContext = {
    sessionId: 'session-1',
    runId: 'run-1',
    cwd: root,
    toolCallId: 'call-1',
    shellRuns: recorder,
    // The host's real port: the tools' own tests see the identity a host would record.
    processIdentity: { identify: processIdentity },
  }
  const walk = async (dir: string): Promise<Array<string>> => {
    const out: Array<string> = []
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) out.push(`${full}/`, ...(await walk(full)))
      else out.push(`${full}=${entry.isFile() ? await readFile(full, 'utf8') : '(special)'}`)
    }
    return out
  }
  return {
    root,
    outside,
    recorder,
    context,
    contextWith: (overrides) => ({ ...context, ...overrides }),
    track: (pid) => pids.push(pid),
    snapshotOutside: async () => (await walk(outside)).join('\n'),
    cleanup: async () => {
      for (const pid of pids) {
        try {
          process.kill(-pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
      await rm(base, { recursive: true, force: true })
    },
  }
}

/**
 * True while `pid` runs (a zombie counts as gone: it runs nothing and only waits to be reaped).
 * @category unsafe
 */
export const isRunning = async (pid: number): Promise<boolean> => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    return !/^[ZXx]/.test(stat.slice(stat.lastIndexOf(')') + 2))
  } catch {
    return true
  }
}

/**
 * Waits until `pid` is gone; false when it still runs after `timeoutMs`.
 * @category unsafe
 */
export const becomesGone = async (pid: number, timeoutMs = 30_000): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs
  while (await isRunning(pid)) {
    if (Date.now() > deadline) return false
    await delay(20)
  }
  return true
}

/**
 * The process group of `pid`, read from /proc (Linux).
 * @category unsafe
 */
export const processGroupOf = async (pid: number): Promise<number> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
}

/**
 * Reads a pid that a shell command wrote into the workspace, waiting for the file to appear.
 * @category unsafe
 */
export const pidWrittenTo = async (file: string, timeoutMs = 30_000): Promise<number> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      const pid = Number((await readFile(file, 'utf8')).trim())
      if (Number.isSafeInteger(pid) && pid > 0) return pid
    } catch {
      // not written yet
    }
    if (Date.now() > deadline) throw new Error(`no pid in ${file}`)
    await delay(20)
  }
}
