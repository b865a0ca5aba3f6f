/**
 * The second read of a planned history (docs/decisions.md #97): a segment's run's committed rows
 * are read again through the store's `replay`, which proves their bytes are the ones planning
 * folded, and filtered to the segment's replay. The count is checked too: what was planned is
 * exactly what is handed over, or the caller hears that it is not.
 */
import type { RuntimeEvent } from '@maka/events'
import type { ReplaySegment } from '@maka/planner'
import type { LedgerScan, StorePorts } from '@maka/stores'
import * as E from 'fp-ts/lib/Either.js'
import type { ReplayFailure } from './Runtime.js'

const failed = (runId: string, message: string): E.Either<ReplayFailure, never> =>
  E.left({ _tag: 'ReplayFailed', runId, message })

/**
 * Streams the events of `segment`, its run read as `scan` described it when planning.
 * @category constructors
 */
export const replaySegment = async (
  stores: StorePorts,
  sessionId: string,
  scan: LedgerScan | undefined,
  segment: ReplaySegment,
  onEvents: (events: ReadonlyArray<RuntimeEvent>) => void | Promise<void>,
): Promise<E.Either<ReplayFailure, void>> => {
  if (scan === undefined) return failed(segment.runId, `run ${segment.runId} was not read while planning`)
  let index = 0
  let handed = 0
  const replayed = await stores.events.replay(
    sessionId,
    segment.runId,
    { committedBytes: scan.committedBytes, digest: scan.digest, rows: scan.rows },
    async (rows) => {
      const batch: Array<RuntimeEvent> = []
      for (const event of rows) {
        if (index < segment.rows && segment.isReplayed(event)) batch.push(event)
        index += 1
      }
      handed += batch.length
      if (batch.length > 0) await onEvents(batch)
    },
  )()
  if (E.isLeft(replayed)) return failed(segment.runId, replayed.left.message)
  if (index < segment.rows || handed !== segment.count) {
    return failed(segment.runId, `run ${segment.runId} holds other rows than the ones planned`)
  }
  return E.right(undefined)
}
