/**
 * Real processes for tests: a live sleeper, a pid that has certainly exited, and a zombie. Every
 * spawned process is tracked so `stopAll` can end it in `afterEach`, whatever the test did.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { setTimeout as delay } from 'node:timers/promises'
import { processStartTime } from '../processFacts.js'

/**
 * A spawned process a test can look at.
 * @category unsafe
 */
export interface Spawned {
  readonly pid: number
  /** The process's start time, recorded the way a host records it at spawn. */
  readonly startedAt: string
}

/**
 * Spawns and tracks test processes.
 * @category unsafe
 */
export interface ProcessFixture {
  sleeper(): Promise<Spawned>
  deadPid(): Promise<number>
  zombiePid(): Promise<number>
  stopAll(): Promise<void>
}

const ZOMBIE_CEILING_MS = 30_000

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()))

const spawned = (child: ChildProcess): Promise<number> =>
  new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('spawn', () => (child.pid === undefined ? reject(new Error('no pid')) : resolve(child.pid)))
  })

/**
 * Creates a process fixture; call `stopAll` in `afterEach`.
 * @category unsafe
 */
export const makeProcessFixtureUnsafe = (): ProcessFixture => {
  const children: Array<ChildProcess> = []
  const track = (child: ChildProcess) => {
    children.push(child)
    return child
  }
  return {
    sleeper: async () => {
      const pid = await spawned(track(spawn('sleep', ['30'], { stdio: 'ignore' })))
      const start = await processStartTime(pid)
      if (start === null) throw new Error(`cannot read the start time of ${pid}`)
      return { pid, startedAt: start.toISOString() }
    },
    deadPid: async () => {
      const child = spawn('true', [], { stdio: 'ignore' })
      const pid = await spawned(child)
      // Node reaps its children on exit, so after this the pid names no process (not even a zombie).
      await exited(child)
      return pid
    },
    zombiePid: async () => {
      // perl (essential on Debian) forks a child that exits at once and never waits for it, so the
      // child stays a zombie until stdin closes and perl exits. (A shell may reap a background job
      // between two commands, which made the zombie vanish before it was seen on a loaded machine.)
      const script = '$| = 1; my $p = fork(); if ($p == 0) { exit 0 } print "$p\\n"; <STDIN>;'
      const child = track(spawn('perl', ['-e', script], { stdio: ['pipe', 'pipe', 'ignore'] }))
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8')))
        child.once('error', reject)
      })
      const pid = Number(line.trim())
      // `sleep 0` needs a moment to exit — on a loaded machine, many moments — and the test is about
      // the zombie, so poll until it is one (Linux), with a ceiling far above any scheduling delay.
      const deadline = Date.now() + ZOMBIE_CEILING_MS
      while (Date.now() < deadline) {
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
        if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return pid
        await delay(20)
      }
      throw new Error(`process ${pid} never became a zombie`)
    },
    stopAll: async () => {
      const all = children.splice(0)
      await Promise.all(
        all.map(async (child) => {
          // Closing stdin lets the zombie's parent reap it; a kill first would orphan the zombie.
          if (child.stdin !== null) {
            child.stdin.end()
            await Promise.race([exited(child), delay(2000)])
          }
          child.kill('SIGKILL')
          await exited(child)
        }),
      )
    },
  }
}
