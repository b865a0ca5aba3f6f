/**
 * Whether a session's `owner.lock` still names a live owner. Only a lock we can prove dead is
 * stale: a lock taken on another host cannot be checked from here, so it counts as alive.
 */
import { hostname as osHostname } from 'node:os'
import type { OwnerLock } from '@maka/events'
import { isSameLiveProcess } from './processFacts.js'

/**
 * `none`: no lock; `alive`: someone (maybe on another host) owns the session; `stale`: may be taken over.
 * @category models
 */
export type OwnerLockLiveness = 'none' | 'alive' | 'stale'

/**
 * Classifies an owner lock: alive iff it names this host's live process with the recorded start time.
 * @category guards
 */
export const ownerLockLiveness = async (
  lock: OwnerLock | null,
  hostname: string = osHostname(),
): Promise<OwnerLockLiveness> => {
  if (lock === null) return 'none'
  if (lock.hostname !== hostname) return 'alive'
  return (await isSameLiveProcess(lock.pid, lock.startedAt)) ? 'alive' : 'stale'
}
