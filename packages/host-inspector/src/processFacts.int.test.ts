import { afterEach, describe, expect, it } from 'vitest'
import {
  currentProcessStartTime,
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
    it('is alive and its start time is close to when it was spawned', async () => {
      const spawnedAround = Date.now()
      const child = await processes.sleeper()

      expect(isProcessAlive(child.pid)).toBe(true)
      const start = await processStartTime(child.pid)
      expect(start).not.toBeNull()
      expect(Math.abs((start?.getTime() ?? 0) - spawnedAround)).toBeLessThan(3000)
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
      expect(Math.abs(own.getTime() - (Date.now() - process.uptime() * 1000))).toBeLessThan(5000)
      expect((await currentProcessStartTime()).getTime()).toBe(own.getTime())
    })
  })
})
