/**
 * The smaller on-disk records of a session: its header, shell runs (and a supervised run's `exit`),
 * the owner lock and continuation claims. Each is owned by `stores`; their shapes are shared here so
 * every package reads them the same way.
 */
import * as t from 'io-ts'
import { AbsolutePath, IsoTimestamp, NonEmptyString, NonNegativeInt, RunId, SessionId, ShellRunId } from './ids.js'
import { strictStruct } from './strictStruct.js'
import { Sha256Digest } from './ToolJournal.js'

/**
 * `session.json`: a projection, so unknown keys are tolerated and kept.
 * @category codecs
 */
export const SessionRecord = t.intersection(
  [t.type({ sessionId: SessionId, cwd: AbsolutePath, createdAt: IsoTimestamp }), t.partial({ title: t.string })],
  'SessionRecord',
)
/**
 * `session.json`: the session's cwd, creation time and title.
 * @category models
 */
export type SessionRecord = t.TypeOf<typeof SessionRecord>

/**
 * The status of a background shell operation.
 * @category codecs
 */
export const ShellRunStatus = t.keyof({ running: null, completed: null, failed: null, killed: null }, 'ShellRunStatus')
/**
 * The status of a background shell operation.
 * @category models
 */
export type ShellRunStatus = t.TypeOf<typeof ShellRunStatus>

/**
 * The identity of a process that no clock can fake: the host's boot id (Linux
 * `/proc/sys/kernel/random/boot_id`) and the process start in clock ticks since that boot (field 22
 * of `/proc/<pid>/stat`). A pid plus these two, compared exactly, names one process for good.
 * @category codecs
 */
export const ProcessIdentity = strictStruct(
  'ProcessIdentity',
  { bootId: NonEmptyString, startTicks: NonNegativeInt },
  {},
)
/**
 * A process's boot id and start ticks.
 * @category models
 */
export type ProcessIdentity = t.TypeOf<typeof ProcessIdentity>

/**
 * `shell-runs/<shellRunId>.json`: one shell operation; `bootId`/`startTicks` are written when the
 * process starts (when the host can read them). A background run has no `operationId`; a supervised
 * foreground run of a protocol run carries the `operationId` of its call, and its `pid` is the
 * supervisor's, whose files lie in `shell-runs/<shellRunId>/`.
 * @category codecs
 */
export const ShellRun = strictStruct(
  'ShellRun',
  {
    shellRunId: ShellRunId,
    sessionId: SessionId,
    runId: RunId,
    command: t.string,
    status: ShellRunStatus,
    pid: NonNegativeInt,
    startedAt: IsoTimestamp,
  },
  {
    endedAt: IsoTimestamp,
    exitCode: t.union([t.number, t.null]),
    bootId: NonEmptyString,
    startTicks: NonNegativeInt,
    operationId: NonEmptyString,
  },
)
/**
 * One shell operation: a background run, or a supervised foreground run (with `operationId`).
 * @category models
 */
export type ShellRun = t.TypeOf<typeof ShellRun>

/**
 * `shell-runs/<shellRunId>/exit`: how a supervised foreground command ended, written atomically by
 * its supervisor after it closed `stdout` and `stderr`, so the files it names are final. The byte
 * counts are the totals each pipe carried; the files keep at most the tool's output cap of them.
 * @category codecs
 */
export const ShellRunExit = strictStruct(
  'ShellRunExit',
  {
    exitCode: t.union([NonNegativeInt, t.null]),
    signal: t.union([NonEmptyString, t.null]),
    stdoutBytes: NonNegativeInt,
    stderrBytes: NonNegativeInt,
  },
  { timedOut: t.literal(true) },
)
/**
 * How a supervised foreground command ended.
 * @category models
 */
export type ShellRunExit = t.TypeOf<typeof ShellRunExit>

/**
 * `owner.lock`: the live process that owns the session; `startedAt` is that process's start time,
 * `bootId`/`startTicks` its exact identity when the host can read them.
 * @category codecs
 */
export const OwnerLock = strictStruct(
  'OwnerLock',
  { pid: NonNegativeInt, hostname: t.string, startedAt: IsoTimestamp },
  { bootId: NonEmptyString, startTicks: NonNegativeInt },
)
/**
 * The live process that owns a session.
 * @category models
 */
export type OwnerLock = t.TypeOf<typeof OwnerLock>

/**
 * `claims/<sourceRunId>@<highWater>.json`: the durable, exclusive claim of one boundary by one
 * continuation target.
 * @category codecs
 */
export const ContinuationClaim = strictStruct(
  'ContinuationClaim',
  {
    sessionId: SessionId,
    sourceInvocationId: NonEmptyString,
    sourceRunId: RunId,
    sourceTurnId: NonEmptyString,
    sourceRuntimeEventHighWater: NonNegativeInt,
    targetInvocationId: NonEmptyString,
    targetRunId: RunId,
    targetTurnId: NonEmptyString,
    claimedAt: IsoTimestamp,
  },
  // Written only by a protocol run (Phase 2), equal to its start row's digest.
  { sourceRuntimeEventPrefixDigest: Sha256Digest },
)
/**
 * The durable claim of one boundary by one continuation target.
 * @category models
 */
export type ContinuationClaim = t.TypeOf<typeof ContinuationClaim>
