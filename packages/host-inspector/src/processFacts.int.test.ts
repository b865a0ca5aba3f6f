import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { ProcessIdentity } from '@maka/events'
import { afterEach, describe, expect, it } from 'vitest'
import {
  currentProcessIdentity,
  currentProcessStartTime,
  isRecordedProcessAlive,
  processIdentity,
  type RecordedProcess,
  isProcessAlive,
  isSameLiveProcess,
  probeProcess,
  probeProcessWithPs,
  processStartTime,
} from './processFacts.js'
import { makeProcessFixtureUnsafe } from './test-support/processes.js'

const processes = makeProcessFixtureUnsafe()
const HOUR_MS = 60 * 60 * 1000
const onLinux = process.platform === 'linux'

afterEach(async () => {
  await processes.stopAll()
})

describe('processFacts', () => {
  describe('when the process is live', () => {
    it('is alive and its start time falls between the moments around its spawn', async () => {
      const before = Date.now()
      const child = await processes.sleeper()
      const after = Date.now()

      expect(isProcessAlive(child.pid)).toBe(true)
      const start = (await processStartTime(child.pid))?.getTime() ?? Number.NaN
      // Bounds, not a duration: however slow the spawn, the start lies between the two readings,
      // give or take the one-second resolution of the kernel's boot time.
      expect(start).toBeGreaterThanOrEqual(before - 1500)
      expect(start).toBeLessThanOrEqual(after + 1500)
    })

    it('is the same live process as recorded', async () => {
      const child = await processes.sleeper()
      expect(await isSameLiveProcess(child.pid, child.startedAt)).toBe(true)
    })

    it('reads the same start time on every look', async () => {
      const child = await processes.sleeper()
      const first = await processStartTime(child.pid)
      const second = await processStartTime(child.pid)
      expect(second?.getTime()).toBe(first?.getTime())
    })
  })

  describe.skipIf(!onLinux)('when the start time is read with ps instead of /proc', () => {
    it('agrees with /proc within the tolerance', async () => {
      const child = await processes.sleeper()
      const viaPs = await probeProcessWithPs(child.pid)

      expect(viaPs.state).toBe('alive')
      const psStart = viaPs.state === 'alive' ? viaPs.startedAt : null
      expect(psStart).not.toBeNull()
      expect(Math.abs((psStart?.getTime() ?? 0) - Date.parse(child.startedAt))).toBeLessThanOrEqual(2000)
    })

    it('sees an exited process as dead', async () => {
      expect(await probeProcessWithPs(await processes.deadPid())).toEqual({ state: 'dead' })
    })
  })

  describe('when the recorded start time is an hour off (pid reuse)', () => {
    it('is not the same live process', async () => {
      const child = await processes.sleeper()
      const wrong = new Date(Date.parse(child.startedAt) - HOUR_MS).toISOString()

      expect(isProcessAlive(child.pid)).toBe(true)
      expect(await isSameLiveProcess(child.pid, wrong)).toBe(false)
    })
  })

  describe('when the recorded start time is just inside the tolerance', () => {
    it('is the same live process', async () => {
      const child = await processes.sleeper()
      const near = new Date(Date.parse(child.startedAt) + 1500).toISOString()
      expect(await isSameLiveProcess(child.pid, near)).toBe(true)
      expect(await isSameLiveProcess(child.pid, near, 1000)).toBe(false)
    })
  })

  describe('when the process has exited', () => {
    it('is neither alive nor the same live process, and has no start time', async () => {
      const pid = await processes.deadPid()

      expect(isProcessAlive(pid)).toBe(false)
      expect(await processStartTime(pid)).toBeNull()
      expect(await isSameLiveProcess(pid, new Date().toISOString())).toBe(false)
    })
  })

  describe.skipIf(!onLinux)('when the process is a zombie', () => {
    it('is not the same live process although its pid still answers signal 0', async () => {
      const pid = await processes.zombiePid()

      expect(isProcessAlive(pid)).toBe(true)
      expect(await probeProcess(pid)).toEqual({ state: 'dead' })
      expect(await isSameLiveProcess(pid, new Date().toISOString())).toBe(false)
    })
  })

  describe.skipIf(!onLinux)('when a process is named by its exact identity', () => {
    it('reads the boot id and the start ticks of field 22 of /proc/<pid>/stat', async () => {
      const child = await processes.sleeper()
      const identity = await processIdentity(child.pid)
      const stat = await readFile(`/proc/${child.pid}/stat`, 'utf8')
      const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim()

      expect(identity).toEqual({ bootId, startTicks: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) })
      expect(await processIdentity(child.pid)).toEqual(identity)
      expect(await currentProcessIdentity()).toMatchObject({ bootId })
    })

    it('has none once the process is gone or a zombie', async () => {
      expect(await processIdentity(await processes.deadPid())).toBeNull()
      expect(await processIdentity(await processes.zombiePid())).toBeNull()
    })

    const cases: ReadonlyArray<{
      readonly situation: string
      readonly change: (identity: ProcessIdentity) => Partial<RecordedProcess>
      readonly alive: boolean
    }> = [
      { situation: 'both match', change: () => ({}), alive: true },
      { situation: 'the start ticks differ', change: (id) => ({ startTicks: id.startTicks + 1 }), alive: false },
      { situation: 'the boot id differs', change: () => ({ bootId: 'another-boot' }), alive: false },
    ]
    it.each(cases)('is alive: $alive when $situation, with startedAt an hour off', async ({ change, alive }) => {
      const child = await processes.sleeper()
      const identity = await processIdentity(child.pid)
      if (identity === null) throw new Error('no identity')
      const recorded = {
        pid: child.pid,
        startedAt: new Date(Date.parse(child.startedAt) - HOUR_MS).toISOString(),
        ...identity,
        ...change(identity),
      }
      expect(await isRecordedProcessAlive(recorded, 'live_pid')).toBe(alive)
      expect(await isRecordedProcessAlive(recorded, 'start_time')).toBe(alive)
    })
  })

  describe('when a record has no exact identity', () => {
    it('counts a live pid as the recorded process under live_pid, and checks the start time under start_time', async () => {
      const child = await processes.sleeper()
      const off = { pid: child.pid, startedAt: new Date(Date.parse(child.startedAt) - HOUR_MS).toISOString() }

      expect(await isRecordedProcessAlive(off, 'live_pid')).toBe(true)
      expect(await isRecordedProcessAlive(off, 'start_time')).toBe(false)
      expect(await isRecordedProcessAlive(child, 'start_time')).toBe(true)
    })

    it('is dead under either rule once the pid is gone', async () => {
      const pid = await processes.deadPid()
      expect(await isRecordedProcessAlive({ pid, startedAt: new Date().toISOString() }, 'live_pid')).toBe(false)
      expect(await isRecordedProcessAlive({ pid, startedAt: new Date().toISOString() }, 'start_time')).toBe(false)
    })
  })

  describe('when the pid is not a single process id', () => {
    it.each([0, -1, 1.5, Number.NaN])('treats %s as dead', async (pid) => {
      expect(isProcessAlive(pid)).toBe(false)
      expect(await processStartTime(pid)).toBeNull()
      expect(await isSameLiveProcess(pid, new Date().toISOString())).toBe(false)
    })
  })

  describe('when the process belongs to another user', () => {
    it('is alive (EPERM counts as alive)', () => {
      // pid 1 exists on every host; signalling it is refused unless we are root, and both mean alive.
      expect(isProcessAlive(1)).toBe(true)
    })
  })

  describe('when this process records its own start time', () => {
    it('matches what a later check computes for process.pid', async () => {
      const own = await currentProcessStartTime()

      expect(await isSameLiveProcess(process.pid, own.toISOString())).toBe(true)
      // The kernel started us before node began counting its uptime (give or take btime's resolution).
      expect(own.getTime()).toBeLessThanOrEqual(Date.now() - process.uptime() * 1000 + 1500)
      expect((await currentProcessStartTime()).getTime()).toBe(own.getTime())
    })

    // Every command that writes an owner lock records its own start and identity; a `getconf` child
    // for the clock-tick rate was a fork and an exec in each of them, and each of the two read /proc.
    it.runIf(onLinux)('computes it and its identity without a child process, reading its /proc stat once', async () => {
      const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url))
      const script = `
        import { createRequire, syncBuiltinESMExports } from 'node:module'
        const cp = createRequire(import.meta.url)('node:child_process')
        const started = []
        for (const name of ['execFile', 'spawn', 'exec']) {
          const original = cp[name]
          cp[name] = (file, ...rest) => { started.push(file); return original(file, ...rest) }
        }
        // procfs is read on the caller's thread (readFileSync); count the promise reads too, should any return.
        const fs = createRequire(import.meta.url)('node:fs')
        const fsp = createRequire(import.meta.url)('node:fs/promises')
        const read = []
        const readFileSync = fs.readFileSync
        fs.readFileSync = (path, ...rest) => { read.push(String(path)); return readFileSync(path, ...rest) }
        const readFile = fsp.readFile
        fsp.readFile = (path, ...rest) => { read.push(String(path)); return readFile(path, ...rest) }
        syncBuiltinESMExports()
        const m = await import(${JSON.stringify(dist)})
        const own = await m.currentProcessStartTime()
        const identity = await m.currentProcessIdentity()
        const statReads = read.filter((p) => p === '/proc/' + process.pid + '/stat').length
        console.log(JSON.stringify({ started, own: own.getTime(), identity: identity !== null, statReads }))
      `
      const before = Date.now()
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])
      const after = Date.now()
      const report = JSON.parse(stdout) as {
        started: ReadonlyArray<string>
        own: number
        identity: boolean
        statReads: number
      }

      expect(report.started).toEqual([])
      expect(report.identity).toBe(true)
      expect(report.statReads).toBe(1)
      // A wrong tick rate would put the start hours away from the moments around the spawn.
      expect(report.own).toBeGreaterThanOrEqual(before - 1500)
      expect(report.own).toBeLessThanOrEqual(after + 1500)
    })
  })
})
