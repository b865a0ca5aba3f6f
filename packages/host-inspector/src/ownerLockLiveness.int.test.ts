import { hostname } from 'node:os'
import { type OwnerLock, type ProcessIdentity, makeNonEmptyStringUnsafe, makeNonNegativeIntUnsafe } from '@maka/events'
import { afterEach, describe, expect, it } from 'vitest'
import { ownerLockLiveness } from './ownerLockLiveness.js'
import { currentProcessIdentity, currentProcessStartTime, processIdentity } from './processFacts.js'
import { makeProcessFixtureUnsafe } from './test-support/processes.js'

const processes = makeProcessFixtureUnsafe()
const HOUR_MS = 60 * 60 * 1000

afterEach(async () => {
  await processes.stopAll()
})

const lock = (pid: number, startedAt: string, host: string = hostname()): OwnerLock =>
  ({ pid, startedAt, hostname: host }) as OwnerLock

describe('ownerLockLiveness', () => {
  describe('when there is no lock', () => {
    it('is none', async () => {
      expect(await ownerLockLiveness(null)).toBe('none')
    })
  })

  describe('when the lock names this process with its start time', () => {
    it('is alive', async () => {
      const startedAt = (await currentProcessStartTime()).toISOString()
      expect(await ownerLockLiveness(lock(process.pid, startedAt))).toBe('alive')
    })
  })

  describe('when the lock names another live process on this host', () => {
    it('is alive', async () => {
      const child = await processes.sleeper()
      expect(await ownerLockLiveness(lock(child.pid, child.startedAt))).toBe('alive')
    })
  })

  describe('when the lock names a dead pid', () => {
    it('is stale', async () => {
      const pid = await processes.deadPid()
      expect(await ownerLockLiveness(lock(pid, new Date().toISOString()))).toBe('stale')
    })
  })

  describe('when the lock names a live pid with another start time', () => {
    it('is stale (the pid was reused)', async () => {
      const startedAt = (await currentProcessStartTime()).getTime()
      expect(await ownerLockLiveness(lock(process.pid, new Date(startedAt - HOUR_MS).toISOString()))).toBe('stale')
    })
  })

  describe.skipIf(process.platform !== 'linux')('when the lock records bootId and startTicks', () => {
    const exactLock = async (change: (identity: ProcessIdentity) => Partial<ProcessIdentity> = () => ({})) => {
      const child = await processes.sleeper()
      const identity = await processIdentity(child.pid)
      if (identity === null) throw new Error(`cannot read the identity of ${child.pid}`)
      // An hour off: only the exact identity may decide.
      const startedAt = new Date(Date.parse(child.startedAt) - HOUR_MS).toISOString()
      return { ...lock(child.pid, startedAt), ...identity, ...change(identity) } as OwnerLock
    }

    it('is alive when they match the live pid, whatever its startedAt says', async () => {
      expect(await ownerLockLiveness(await exactLock())).toBe('alive')
    })

    it('is stale when the startTicks differ (the pid was reused)', async () => {
      const reused = await exactLock((identity) => ({ startTicks: makeNonNegativeIntUnsafe(identity.startTicks + 1) }))
      expect(await ownerLockLiveness(reused)).toBe('stale')
    })

    it('is stale when the bootId differs (the owner ran before a reboot)', async () => {
      expect(
        await ownerLockLiveness(await exactLock(() => ({ bootId: makeNonEmptyStringUnsafe('another-boot') }))),
      ).toBe('stale')
    })

    it('names this process exactly when it is our own', async () => {
      const own = await currentProcessIdentity()
      expect(own).not.toBeNull()
      const startedAt = (await currentProcessStartTime()).toISOString()
      expect(await ownerLockLiveness({ ...lock(process.pid, startedAt), ...own })).toBe('alive')
    })
  })

  describe('when the lock was taken on another host', () => {
    it('is alive even with a dead pid (it cannot be checked from here)', async () => {
      const pid = await processes.deadPid()
      expect(await ownerLockLiveness(lock(pid, new Date().toISOString(), 'some-other-host'))).toBe('alive')
    })
  })

  describe('when the caller passes its own hostname', () => {
    it('compares the lock with that name', async () => {
      const pid = await processes.deadPid()
      expect(await ownerLockLiveness(lock(pid, new Date().toISOString(), 'box-a'), 'box-a')).toBe('stale')
      expect(await ownerLockLiveness(lock(pid, new Date().toISOString(), 'box-a'), 'box-b')).toBe('alive')
    })
  })
})
