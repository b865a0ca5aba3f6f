/**
 * The supervisor of a foreground `shell` command in a protocol run (docs/contract.md, "reattach").
 * The tool runs this file with `process.execPath`, in a session of its own, with a control pipe on
 * stdin; the command then outlives a crash of the agent, and its end is still written down.
 *
 * Order, and why: the output files are created first; the command starts only on a "go" byte, which
 * the tool sends after the shell-run record naming this process is durable. If the pipe ends first,
 * the agent died before that, and nothing is started: a command with no record never ran. Once it
 * runs, the pipe's end changes nothing. A "cancel" byte kills the command's process group, as the
 * tool did before supervision.
 *
 * This is a script, not a module: it imports nothing but Node and the protocol's constants, so it
 * starts fast and cannot share a failure with the agent's code. Its config is one JSON argument
 * (`supervisorProtocol.ts`).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, constants, fsyncSync, openSync, renameSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { CONTROL_CANCEL, CONTROL_GO, SUPERVISOR_EXIT, type SupervisorConfig } from './supervisorProtocol.js'

// How long output may keep arriving after the shell itself exited (the tool's value before supervision).
const PIPE_GRACE_MS = 500

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const FILE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

const parseConfig = (text: string | undefined): SupervisorConfig | null => {
  try {
    const c = JSON.parse(text ?? '') as Partial<SupervisorConfig>
    const ok =
      typeof c.dir === 'string' &&
      typeof c.cwd === 'string' &&
      typeof c.command === 'string' &&
      Number.isSafeInteger(c.timeoutMs) &&
      Number.isSafeInteger(c.capBytes) &&
      Number.isSafeInteger(c.agentPid)
    return ok ? (c as SupervisorConfig) : null
  } catch {
    return null
  }
}

const writeAll = (fd: number, bytes: Buffer): void => {
  let at = 0
  while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at)
}

// Temp file, fsync, rename, folder fsync: a reader sees no file or the whole one, even after a crash.
const writeDurably = (dir: string, name: string, text: string): void => {
  const temp = join(dir, `.${name}.${process.pid}.tmp`)
  const fd = openSync(temp, FILE_FLAGS, 0o600)
  try {
    writeAll(fd, Buffer.from(text))
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temp, join(dir, name))
  const folder = openSync(dir, constants.O_RDONLY)
  try {
    fsyncSync(folder)
  } finally {
    closeSync(folder)
  }
}

// The group may already be gone (ESRCH); that is the state we wanted.
const killGroup = (pid: number | undefined): void => {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

interface Sink {
  readonly total: () => number
  readonly done: Promise<void>
}

// Keeps the first `cap` bytes in the file and counts the rest. A write that fails (a full disk) stops
// the keeping, not the command: the file then disagrees with the totals in `exit`, which every reader
// refuses, and the command's end is still written.
const drain = (stream: Readable | null, fd: number, cap: number): Sink => {
  let kept = 0
  let total = 0
  stream?.on('data', (chunk: Buffer) => {
    total += chunk.length
    if (kept >= cap) return
    const slice = chunk.subarray(0, cap - kept)
    try {
      writeAll(fd, slice)
      kept += slice.length
    } catch {
      kept = cap
    }
  })
  const done = new Promise<void>((resolve) => {
    if (stream === null) resolve()
    else stream.once('close', () => resolve())
  })
  return { total: () => total, done }
}

const finish = (
  config: SupervisorConfig,
  files: { readonly stdout: number; readonly stderr: number },
  child: ChildProcess,
  timer: NodeJS.Timeout,
  state: { timedOut: boolean },
): void => {
  const out = drain(child.stdout, files.stdout, config.capBytes)
  const err = drain(child.stderr, files.stderr, config.capBytes)
  child.once('exit', (exitCode: number | null, signal: NodeJS.Signals | null) => {
    clearTimeout(timer)
    // Anything the command left running in its group ends with it, as before supervision; that also
    // closes the pipes such leftovers hold.
    killGroup(child.pid)
    // A leftover that escaped the group (setsid) may still hold a pipe: stop waiting for it.
    const grace = setTimeout(() => {
      child.stdout?.destroy()
      child.stderr?.destroy()
    }, PIPE_GRACE_MS)
    void Promise.all([out.done, err.done]).then(() => {
      clearTimeout(grace)
      // The files are final before `exit` names their totals.
      for (const fd of [files.stdout, files.stderr]) {
        fsyncSync(fd)
        closeSync(fd)
      }
      const exit = {
        exitCode,
        signal,
        ...(state.timedOut ? { timedOut: true } : {}),
        stdoutBytes: out.total(),
        stderrBytes: err.total(),
      }
      writeDurably(config.dir, 'exit', JSON.stringify(exit))
      process.exit(SUPERVISOR_EXIT.reported)
    })
  })
}

const start = (config: SupervisorConfig, files: { readonly stdout: number; readonly stderr: number }): ChildProcess => {
  const state = { timedOut: false }
  const child = spawn('/bin/sh', ['-c', config.command], {
    cwd: config.cwd,
    // Own process group: `kill(-pid)` then reaches every process the command started.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MAKA_AGENT_PID: String(config.agentPid) },
  })
  child.once('error', (cause: NodeJS.ErrnoException) => {
    killGroup(child.pid)
    try {
      writeDurably(config.dir, 'spawn-error', typeof cause.code === 'string' ? cause.code : 'UNKNOWN')
    } finally {
      process.exit(SUPERVISOR_EXIT.spawn_failed)
    }
  })
  const timer = setTimeout(() => {
    state.timedOut = true
    killGroup(child.pid)
  }, config.timeoutMs)
  finish(config, files, child, timer, state)
  return child
}

// -------------------------------------------------------------------------------------
// main
// -------------------------------------------------------------------------------------

const main = (): void => {
  const config = parseConfig(process.argv[2])
  if (config === null) process.exit(SUPERVISOR_EXIT.not_set_up)
  let files: { readonly stdout: number; readonly stderr: number }
  try {
    files = {
      stdout: openSync(join(config.dir, 'stdout'), FILE_FLAGS, 0o600),
      stderr: openSync(join(config.dir, 'stderr'), FILE_FLAGS, 0o600),
    }
  } catch {
    process.exit(SUPERVISOR_EXIT.not_set_up)
  }
  let child: ChildProcess | undefined
  let cancelled = false
  const stop = (): void => {
    // Only before "go" does the pipe's end matter: then nothing may start.
    if (child === undefined) process.exit(SUPERVISOR_EXIT.not_started)
  }
  process.stdin.on('data', (chunk: Buffer) => {
    for (const byte of chunk.toString('latin1')) {
      if (byte === CONTROL_CANCEL) {
        cancelled = true
        if (child === undefined) process.exit(SUPERVISOR_EXIT.not_started)
        killGroup(child.pid)
      } else if (byte === CONTROL_GO && child === undefined && !cancelled) {
        child = start(config, files)
      }
    }
  })
  process.stdin.once('end', stop)
  process.stdin.once('error', stop)
}

main()
