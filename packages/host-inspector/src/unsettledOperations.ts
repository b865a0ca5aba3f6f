/**
 * What still keeps a session busy. A resume while a background shell command, a sub-agent or
 * another continuation is still working would race it, so each is reported; and a record we cannot
 * read might be one of them, so it fails the whole observation rather than being skipped.
 */
import { pipe } from 'fp-ts/lib/function.js'
import * as E from 'fp-ts/lib/Either.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { isChildRun, isContinuationRun, type AgentRun, type RunStatus, type ShellRun } from '@maka/events'
import type { UnsettledOperation } from '@maka/planner'
import { runsUnreadable, shellRunsUnreadable, type InspectError } from './InspectError.js'
import { isRecordedProcessAlive } from './processFacts.js'
import type { SessionStatePort, ShellRunEntry } from './SessionStatePort.js'
import type { RunListing, StoreError } from '@maka/stores'

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

// A port is a boundary we do not control: a rejected task or a throw becomes the same typed error as a Left.
const callPort = <A>(
  call: () => TE.TaskEither<StoreError, A>,
  onError: (cause: unknown) => InspectError,
): TE.TaskEither<InspectError, A> =>
  pipe(
    TE.tryCatch(() => call()(), onError),
    TE.flatMap((result) => TE.fromEither(pipe(result, E.mapLeft(onError)))),
  )

// Entries are inspected with `in`, which throws on non-objects; a malformed listing is a failed read.
const wellFormedListing = <A>(
  entries: ReadonlyArray<A>,
  onError: (cause: unknown) => InspectError,
): TE.TaskEither<InspectError, ReadonlyArray<A>> =>
  Array.isArray(entries) && entries.every((entry) => typeof entry === 'object' && entry !== null)
    ? TE.right(entries)
    : TE.left(onError('the store returned a malformed listing'))

const OPEN_RUN_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>(['created', 'running', 'waiting_permission'])

const KIND_ORDER: Readonly<Record<UnsettledOperation['kind'], number>> = {
  shell_run: 0,
  child_run: 1,
  continuation_run: 2,
}

const byKindThenId = (a: UnsettledOperation, b: UnsettledOperation): number =>
  KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const isShellRun = (entry: ShellRunEntry): entry is ShellRun => !('error' in entry)

const isRunHeader = (entry: RunListing): entry is Extract<RunListing, { readonly header: AgentRun }> =>
  !('error' in entry)

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The session's shell runs marked `running` whose process still runs: the same pid, boot and start ticks,
 * or — for a record without them — a live pid (never judged by the clock). A supervised foreground run
 * whose `operationId` is in `openOperationIds` is left out: while its operation is open in the planned
 * chain, only the `reattach` observation judges it. By default none is left out, the safe side.
 * @category constructors
 */
export const unsettledShellRuns = (
  port: SessionStatePort,
  sessionId: string,
  openOperationIds: ReadonlyArray<string> = [],
): TE.TaskEither<InspectError, ReadonlyArray<UnsettledOperation>> => {
  const open = new Set(openOperationIds)
  return pipe(
    callPort(
      () => port.listShellRuns(sessionId),
      (cause) => shellRunsUnreadable(sessionId, cause),
    ),
    TE.flatMap((entries) => wellFormedListing(entries, (cause) => shellRunsUnreadable(sessionId, cause))),
    TE.flatMap((entries) => {
      const broken = entries.find((entry) => !isShellRun(entry))
      if (broken !== undefined && 'error' in broken) {
        return TE.left(shellRunsUnreadable(sessionId, broken.error, broken.shellRunId))
      }
      // A `running` record whose process is gone (or whose pid provably names another process) is an orphan
      // that recovery will mark failed; it runs nothing, so it does not hold the session.
      const running = entries
        .filter(isShellRun)
        .filter((run) => run.status === 'running')
        .filter((run) => run.operationId === undefined || !open.has(run.operationId))
      return TE.fromTask(async () => {
        const live = await Promise.all(running.map((run) => isRecordedProcessAlive(run, 'live_pid')))
        return running
          .filter((_, i) => live[i] === true)
          .map((run): UnsettledOperation => ({
            kind: 'shell_run',
            id: run.shellRunId,
            ...(run.operationId === undefined ? {} : { operationId: run.operationId }),
          }))
      })
    }),
  )
}

/**
 * The session's child and continuation runs whose header is still `created`/`running`/`waiting_permission`.
 * @category constructors
 */
export const unsettledRuns = (
  port: SessionStatePort,
  sessionId: string,
  excludeRunIds: ReadonlyArray<string> = [],
): TE.TaskEither<InspectError, ReadonlyArray<UnsettledOperation>> => {
  const excluded = new Set(excludeRunIds)
  return pipe(
    callPort(
      () => port.listRuns(sessionId),
      (cause) => runsUnreadable(sessionId, cause),
    ),
    TE.flatMap((entries) => wellFormedListing(entries, (cause) => runsUnreadable(sessionId, cause))),
    TE.flatMap((entries) => {
      // An excluded run is one the caller reasons about itself (the source run), so its own
      // unreadability is reported there, more precisely than as an unobservable host.
      const considered = entries.filter((entry) => !excluded.has(entry.runId))
      const broken = considered.find((entry) => !isRunHeader(entry))
      if (broken !== undefined && 'error' in broken) {
        return TE.left(runsUnreadable(sessionId, broken.error, broken.runId))
      }
      return TE.right(
        considered
          .filter(isRunHeader)
          .filter(({ header }) => !excluded.has(header.runId) && OPEN_RUN_STATUSES.has(header.status))
          .flatMap(({ runId, header }): ReadonlyArray<UnsettledOperation> => {
            if (isContinuationRun(header)) return [{ kind: 'continuation_run', id: runId }]
            if (isChildRun(header)) return [{ kind: 'child_run', id: runId }]
            // An open top-level run is a resume candidate (or the source), judged by the planner, not here.
            return []
          }),
      )
    }),
  )
}

/**
 * Every unsettled operation of a session, shell runs first, then child runs, then continuations, each
 * by id; `openOperationIds` as for {@link unsettledShellRuns}.
 * @category constructors
 */
export const unsettledOperationsOf = (
  port: SessionStatePort,
  sessionId: string,
  excludeRunIds: ReadonlyArray<string> = [],
  openOperationIds: ReadonlyArray<string> = [],
): TE.TaskEither<InspectError, ReadonlyArray<UnsettledOperation>> =>
  pipe(
    TE.Do,
    TE.apS('shell', unsettledShellRuns(port, sessionId, openOperationIds)),
    TE.apS('runs', unsettledRuns(port, sessionId, excludeRunIds)),
    TE.map(({ shell, runs }) => [...shell, ...runs].sort(byKindThenId)),
  )
