/**
 * Whether a session's `owner.lock` still names a live owner. Only a lock we can prove dead is
 * stale: a lock taken on another host cannot be checked from here, so it counts as alive.
 */
import { hostname as osHostname } from 'node:os'
import type { OwnerLock } from '@maka/events'
import { isRecordedProcessAlive } from './processFacts.js'

/**
 * `none`: no lock; `alive`: someone (maybe on another host) owns the session; `stale`: may be taken over.
 * @category models
 */
export type OwnerLockLiveness = 'none' | 'alive' | 'stale'

/**
 * Classifies an owner lock: alive iff it names this host's live process (exact identity, else start time).
 * @category guards
 */
export const ownerLockLiveness = async (
  lock: OwnerLock | null,
  hostname: string = osHostname(),
): Promise<OwnerLockLiveness> => {
  if (lock === null) return 'none'
  if (lock.hostname !== hostname) return 'alive'
  // A lock without bootId/startTicks (an older writer, or a host without /proc) keeps the start-time rule.
  return (await isRecordedProcessAlive(lock, 'start_time')) ? 'alive' : 'stale'
}
