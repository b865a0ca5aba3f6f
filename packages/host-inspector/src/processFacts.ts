/**
 * Process facts: is a pid alive, and is it still the process we recorded? A pid alone is not an
 * identity — the kernel reuses pids — so every record that names a process (owner.lock, shell runs)
 * also keeps its start time and, where the host has /proc, its exact identity: the boot id and the
 * start in clock ticks since boot. Those two never move with the wall clock, so they are compared
 * exactly; the wall-clock start time (within a tolerance) is only the fallback of a record that has
 * no identity, and it may never declare a live background process dead.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { ProcessIdentity } from '@maka/events'
import { errnoCode } from '@maka/stores'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What one look at a pid found: gone (or a zombie), or alive with its start time when readable.
 * @category models
 */
export type ProcessProbe =
  | { readonly state: 'dead' }
  | { readonly state: 'alive'; readonly startedAt: Date | null; readonly startTicks?: number }

/**
 * A record's view of a process: its pid and start time, and its exact identity when it was readable.
 * @category models
 */
export interface RecordedProcess {
  readonly pid: number
  readonly startedAt: string
  readonly bootId?: string
  readonly startTicks?: number
}

/**
 * How a record without `bootId`/`startTicks` is judged when its pid is alive: `live_pid` counts it
 * as the recorded process (shell runs: declaring live work dead is the unsafe mistake);
 * `start_time` compares start times within the tolerance (owner locks, so a reused pid is stale).
 * @category models
 */
export type WithoutIdentity = 'live_pid' | 'start_time'

/**
 * How far a recorded start time may be from the observed one and still name the same process.
 * /proc start times are ticks after a boot time with one-second resolution that the kernel derives
 * from the wall clock, and `ps` truncates to seconds; a reused pid starts far later than that.
 * @category models
 */
export const DEFAULT_START_TIME_TOLERANCE_MS = 2000

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const DEAD: ProcessProbe = { state: 'dead' }

const isValidPid = (pid: number): boolean => Number.isSafeInteger(pid) && pid > 0

// procfs files are made by the kernel as they are read, never fetched from a disk: a synchronous read
// takes microseconds, where `readFile` makes four round trips through libuv's thread pool (a cold
// command reads five of them). Failures stay rejections.
const readProcBytes = (path: string): Promise<Buffer> => new Promise((resolve) => resolve(readFileSync(path)))
const readProcText = (path: string): Promise<string> => new Promise((resolve) => resolve(readFileSync(path, 'utf8')))

const run = (file: string, args: ReadonlyArray<string>): Promise<string | null> =>
  new Promise((resolve) => {
    try {
      execFile(
        file,
        [...args],
        { encoding: 'utf8', timeout: 5000, env: { ...process.env, LC_ALL: 'C' } },
        (error, stdout) => resolve(error === null ? stdout : null),
      )
    } catch {
      resolve(null)
    }
  })

let clockTicks: Promise<number> | undefined

// AT_CLKTCK in the auxiliary vector: the value the kernel handed this process at exec, which is what
// sysconf(_SC_CLK_TCK) itself returns.
const AT_CLKTCK = 17n

// The architectures whose auxv words are 64-bit little-endian; others ask `getconf`.
const AUXV_64_LE = process.arch === 'x64' || process.arch === 'arm64'

// The auxiliary vector is (type, value) pairs of native words, ended by type 0 (AT_NULL).
const clockTicksFromAuxv = (auxv: Buffer): number | null => {
  if (auxv.length % 16 !== 0) return null
  for (let at = 0; at + 16 <= auxv.length; at += 16) {
    const type = auxv.readBigUInt64LE(at)
    if (type === 0n) return null
    if (type === AT_CLKTCK) {
      const n = Number(auxv.readBigUInt64LE(at + 8))
      return Number.isSafeInteger(n) && n > 0 ? n : null
    }
  }
  return null
}

const clockTicksFromGetconf = (): Promise<number> =>
  run('getconf', ['CLK_TCK']).then((out) => {
    const n = out === null ? NaN : Number(out.trim())
    return Number.isSafeInteger(n) && n > 0 ? n : 100
  })

// CLK_TCK is fixed for the life of the kernel, so one look per process is enough. /proc/self/auxv
// answers it without spawning `getconf` (a fork and an exec on every command that writes an owner
// lock); `getconf` stays the fallback where auxv is unreadable or its words are not read here, and 100
// (the Linux default) the last resort.
const clockTicksPerSecond = (): Promise<number> => {
  clockTicks ??= readProcBytes('/proc/self/auxv').then(
    (auxv) => (AUXV_64_LE ? clockTicksFromAuxv(auxv) : null) ?? clockTicksFromGetconf(),
    () => clockTicksFromGetconf(),
  )
  return clockTicks
}

let procfs: Promise<boolean> | undefined

const hasProcfs = (): Promise<boolean> => {
  procfs ??= readProcText('/proc/self/stat').then(
    () => true,
    () => false,
  )
  return procfs
}

// btime is re-read on every call: the kernel derives it from the wall clock, and a cached value would
// drift from what another process computes after a clock adjustment.
const bootTimeMs = async (): Promise<number | null> => {
  try {
    const match = /^btime\s+(\d+)\s*$/m.exec(await readProcText('/proc/stat'))
    return match?.[1] === undefined ? null : Number(match[1]) * 1000
  } catch {
    return null
  }
}

let bootIdRead: Promise<string | null> | undefined

// The boot id names one boot of the kernel; no process outlives it, so one read per process is enough.
const readBootId = (): Promise<string | null> => {
  bootIdRead ??= readProcText('/proc/sys/kernel/random/boot_id').then(
    (text) => (text.trim().length > 0 ? text.trim() : null),
    () => null,
  )
  return bootIdRead
}

const probeLinux = async (pid: number): Promise<ProcessProbe> => {
  let stat: string
  try {
    stat = await readProcText(`/proc/${pid}/stat`)
  } catch {
    // hidepid can hide another user's live process from /proc while kill(0) still reports it.
    return isProcessAlive(pid) ? { state: 'alive', startedAt: null } : DEAD
  }
  // comm (field 2) may itself hold spaces and ')', so fields are counted from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const state = fields[0]
  // A zombie has exited and only waits to be reaped: it runs nothing and holds nothing.
  if (state === 'Z' || state === 'X' || state === 'x') return DEAD
  const startTicks = Number(fields[22 - 3])
  if (!Number.isSafeInteger(startTicks) || startTicks < 0) return { state: 'alive', startedAt: null }
  const boot = await bootTimeMs()
  if (boot === null) return { state: 'alive', startedAt: null, startTicks }
  const ticks = await clockTicksPerSecond()
  return { state: 'alive', startedAt: new Date(boot + Math.round((startTicks * 1000) / ticks)), startTicks }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Looks at a pid with `ps` only: the portable path (macOS), exported so Linux tests can check it agrees with /proc.
 * @category constructors
 */
export const probeProcessWithPs = async (pid: number): Promise<ProcessProbe> => {
  if (!isValidPid(pid) || !isProcessAlive(pid)) return DEAD
  const out = await run('ps', ['-o', 'stat=,lstart=', '-p', String(pid)])
  if (out === null) return isProcessAlive(pid) ? { state: 'alive', startedAt: null } : DEAD
  const match = /^\s*(\S+)\s+(.+?)\s*$/.exec(out)
  if (match?.[1] === undefined || match[2] === undefined) return { state: 'alive', startedAt: null }
  if (match[1].startsWith('Z')) return DEAD
  // lstart is local time, e.g. "Tue Dec  2 14:58:01 2025"; Date parses it in the same local zone.
  const startedAt = new Date(match[2].replace(/\s+/g, ' '))
  return { state: 'alive', startedAt: Number.isNaN(startedAt.getTime()) ? null : startedAt }
}

/**
 * Looks at a pid once: dead (gone, a zombie, or not a valid pid) or alive with its start time if readable.
 * @category constructors
 */
export const probeProcess = async (pid: number): Promise<ProcessProbe> => {
  if (!isValidPid(pid)) return DEAD
  try {
    return (await hasProcfs()) ? await probeLinux(pid) : await probeProcessWithPs(pid)
  } catch {
    return isProcessAlive(pid) ? { state: 'alive', startedAt: null } : DEAD
  }
}

/**
 * The start time of a live process, or null when it is gone, a zombie, or its start cannot be read.
 * @category constructors
 */
export const processStartTime = async (pid: number): Promise<Date | null> => {
  const probe = await probeProcess(pid)
  return probe.state === 'alive' ? probe.startedAt : null
}

let ownProbe: Promise<ProcessProbe> | undefined

// Our own start never changes: one look serves both the start time and the identity this process
// records about itself, so every record it writes agrees and /proc is read for it once.
const probeOwnProcess = (): Promise<ProcessProbe> => {
  ownProbe ??= probeProcess(process.pid)
  return ownProbe
}

let ownStart: Promise<Date> | undefined

/**
 * This process's start time, computed the way {@link isSameLiveProcess} will later check it.
 * @category constructors
 */
export const currentProcessStartTime = (): Promise<Date> => {
  ownStart ??= probeOwnProcess().then(
    (probe) => (probe.state === 'alive' ? probe.startedAt : null) ?? new Date(Date.now() - process.uptime() * 1000),
  )
  return ownStart
}

/**
 * The exact identity (boot id + start ticks) of a live process, or null when it is gone, a zombie,
 * or the host does not expose it (no /proc).
 * @category constructors
 */
export const processIdentity = async (pid: number): Promise<ProcessIdentity | null> =>
  identityOf(await probeProcess(pid))

const identityOf = async (probe: ProcessProbe): Promise<ProcessIdentity | null> => {
  if (probe.state === 'dead' || probe.startTicks === undefined) return null
  const bootId = await readBootId()
  return bootId === null ? null : ({ bootId, startTicks: probe.startTicks } as ProcessIdentity)
}

let ownIdentity: Promise<ProcessIdentity | null> | undefined

/**
 * This process's exact identity, for the records it writes about itself (owner.lock).
 * @category constructors
 */
export const currentProcessIdentity = (): Promise<ProcessIdentity | null> => {
  ownIdentity ??= probeOwnProcess().then(identityOf)
  return ownIdentity
}

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * True when a process with this pid exists (signal 0; EPERM means it exists but is not ours).
 * @category guards
 */
export const isProcessAlive = (pid: number): boolean => {
  // pid 0 and negative pids address process groups, never one process.
  if (!isValidPid(pid)) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errnoCode(error) === 'EPERM'
  }
}

/**
 * True when `pid` is alive and started within `toleranceMs` of `startedAt` (so not a reused pid).
 * @category guards
 */
export const isSameLiveProcess = async (
  pid: number,
  startedAt: string,
  toleranceMs: number = DEFAULT_START_TIME_TOLERANCE_MS,
): Promise<boolean> => {
  const probe = await probeProcess(pid)
  if (probe.state === 'dead') return false
  const recorded = Date.parse(startedAt)
  // Fail closed: a live pid we cannot prove to be a different process is treated as the recorded one.
  if (probe.startedAt === null || Number.isNaN(recorded)) return true
  return Math.abs(probe.startedAt.getTime() - recorded) <= toleranceMs
}

/**
 * True when the recorded process still runs. A record with `bootId` and `startTicks` is alive iff
 * its pid is alive on the same boot with the same start ticks, compared exactly; the clock plays no
 * part. A record without them (or on a host that cannot read them) is judged by `withoutIdentity`.
 * @category guards
 */
export const isRecordedProcessAlive = async (
  recorded: RecordedProcess,
  withoutIdentity: WithoutIdentity,
): Promise<boolean> => {
  const probe = await probeProcess(recorded.pid)
  if (probe.state === 'dead') return false
  const hostBootId = recorded.bootId === undefined || recorded.startTicks === undefined ? null : await readBootId()
  if (hostBootId !== null) {
    // No process survives a reboot: a live pid on another boot is another process.
    if (hostBootId !== recorded.bootId) return false
    // Fail closed: a live pid whose ticks we cannot read is not proven to be another process.
    return probe.startTicks === undefined || probe.startTicks === recorded.startTicks
  }
  if (withoutIdentity === 'live_pid') return true
  return isSameLiveProcess(recorded.pid, recorded.startedAt)
}
