/**
 * Observation of a `reattach` operation: a protocol run's foreground `shell` call, whose command
 * runs under a supervisor that outlives the agent (docs/contract.md, the tool journal's `reattach`
 * mode). The supervisor writes `exit` atomically once the command ended and its output files are
 * closed, then ends; so `exit` means the result is final, a live supervisor means the command may
 * still run, and neither means nobody will ever report its end.
 *
 * Observing reads only: it never writes, signals or waits.
 */
import { lstat } from 'node:fs/promises'
import { join } from 'node:path'
import { pipe } from 'fp-ts/lib/function.js'
import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { ShellRun } from '@maka/events'
import { shellRunsUnreadable, type InspectError } from './InspectError.js'
import { isRecordedProcessAlive, type RecordedProcess } from './processFacts.js'
import type { SessionStatePort, ShellRunEntry } from './SessionStatePort.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What one look at a `reattach` operation found.
 * @category models
 */
export const ReattachObservation = {
  /** The supervisor wrote `exit`: the command ended and its files are final. */
  exited: 'exited',
  /** No `exit` yet, and the recorded supervisor (same pid, boot id and start ticks) is alive. */
  running: 'running',
  /** No `exit`, and no live supervisor: no record, never started, or its supervisor is gone. */
  lost: 'lost',
} as const
/**
 * What one look at a `reattach` operation found.
 * @category models
 */
export type ReattachObservation = (typeof ReattachObservation)[keyof typeof ReattachObservation]

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

// Only a regular file is the supervisor's rename; a link or anything else at that name is not, and a
// folder that cannot be read is no proof of an end either.
const exitWritten = async (dir: string): Promise<boolean> => {
  try {
    return (await lstat(join(dir, 'exit'))).isFile()
  } catch {
    return false
  }
}

const isShellRun = (entry: ShellRunEntry): entry is ShellRun => !('error' in entry)

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Observes one supervised run from its record and its folder (`shell-runs/<shellRunId>/`).
 *
 * The supervisor is looked at before the folder: it writes `exit` before it ends, so a supervisor
 * found gone and then no `exit` is a lost run, never one that ended between the two looks.
 * @category constructors
 */
export const observeReattach = async (record: RecordedProcess, dir: string): Promise<ReattachObservation> => {
  const alive = await isRecordedProcessAlive(record, 'live_pid')
  if (await exitWritten(dir)) return ReattachObservation.exited
  return alive ? ReattachObservation.running : ReattachObservation.lost
}

/**
 * The shell-run record of an operation in a session's listing, or `null` when none names it. A
 * listing with an unreadable entry fails (that entry may be the record), and so do two records of
 * one operation (the tool writes one).
 * @category constructors
 */
export const findReattachRecord = (
  entries: ReadonlyArray<ShellRunEntry>,
  sessionId: string,
  operationId: string,
): E.Either<InspectError, ShellRun | null> => {
  const broken = entries.find((entry) => !isShellRun(entry))
  if (broken !== undefined && 'error' in broken) {
    return E.left(shellRunsUnreadable(sessionId, broken.error, broken.shellRunId))
  }
  const named = entries.filter(isShellRun).filter((run) => run.operationId === operationId)
  if (named.length > 1) {
    return E.left(
      shellRunsUnreadable(sessionId, `${named.length} shell runs name operation ${operationId}`, named[1]?.shellRunId),
    )
  }
  return E.right(named[0] ?? null)
}

/**
 * Observes the `reattach` operation `operationId` of a session: its record from the port, its
 * folder from `shellRunDir`; no record is `lost`.
 * @category constructors
 */
export const observeReattachOperation = (
  port: SessionStatePort,
  sessionId: string,
  operationId: string,
  shellRunDir: (shellRunId: string) => string,
): TE.TaskEither<InspectError, ReattachObservation> =>
  pipe(
    TE.tryCatch(
      () => port.listShellRuns(sessionId)(),
      (cause) => shellRunsUnreadable(sessionId, cause),
    ),
    TE.flatMap((listed) =>
      TE.fromEither(
        pipe(
          listed,
          E.mapLeft((cause) => shellRunsUnreadable(sessionId, cause)),
        ),
      ),
    ),
    TE.flatMap((entries) =>
      Array.isArray(entries) && entries.every((entry) => typeof entry === 'object' && entry !== null)
        ? TE.fromEither(findReattachRecord(entries, sessionId, operationId))
        : TE.left(shellRunsUnreadable(sessionId, 'the store returned a malformed listing')),
    ),
    TE.flatMap((record) => {
      if (record === null) return TE.right<InspectError, ReattachObservation>(ReattachObservation.lost)
      return TE.tryCatch(
        () => observeReattach(record, shellRunDir(record.shellRunId)),
        (cause) => shellRunsUnreadable(sessionId, cause, record.shellRunId),
      )
    }),
  )
