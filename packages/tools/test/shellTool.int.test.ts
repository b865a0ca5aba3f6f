import { readFile, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { decodeWith, ShellRun } from '@maka/events'
import { processIdentity } from '@maka/host-inspector'
import * as E from 'fp-ts/lib/Either.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  makeShellTool,
  SHELL_OUTPUT_CAP_BYTES,
  type BackgroundShellResult,
  type ShellResult,
  type ShellRunRecorder,
} from '../src/index.js'
import { becomesGone, givenWorkspaceUnsafe, pidWrittenTo, processGroupOf, type Workspace } from './givenWorkspace.js'

const shell = makeShellTool()

describe('shell', () => {
  let ws: Workspace
  beforeEach(async () => {
    ws = await givenWorkspaceUnsafe()
  })
  afterEach(async () => {
    await ws.cleanup()
  })

  describe('when a foreground command succeeds', () => {
    it('returns its stdout, stderr and exit code 0, run in the workspace root', async () => {
      const outcome = await shell.run({ command: 'pwd; echo oops >&2' }, ws.context)
      expect(outcome).toEqual({
        result: { exitCode: 0, signal: null, stdout: `${ws.root}\n`, stderr: 'oops\n' },
        isError: false,
      })
    })

    it('caps a flood of output with a note', async () => {
      const outcome = await shell.run(
        { command: `head -c ${SHELL_OUTPUT_CAP_BYTES + 100} /dev/zero | tr '\\0' y` },
        ws.context,
      )
      const { stdout } = outcome.result as ShellResult
      expect(stdout.startsWith('y'.repeat(SHELL_OUTPUT_CAP_BYTES))).toBe(true)
      expect(stdout).toMatch(/\[truncated: showing the first 65536 of 65636 bytes\]$/)
    })
  })

  describe('when a foreground command fails', () => {
    it('flags a non-zero exit as an error and keeps the exit code', async () => {
      const outcome = await shell.run({ command: 'echo partial; exit 7' }, ws.context)
      expect(outcome).toEqual({
        result: { exitCode: 7, signal: null, stdout: 'partial\n', stderr: '' },
        isError: true,
      })
    })
  })

  describe('when a foreground command outlives its timeout', () => {
    it('kills the whole process group and says it timed out', async () => {
      const outcome = await shell.run({ command: 'sleep 30 & echo $! > sleep.pid; wait', timeoutMs: 200 }, ws.context)
      expect(outcome).toMatchObject({ result: { timedOut: true, exitCode: null, signal: 'SIGKILL' }, isError: true })
      const sleeper = await pidWrittenTo(path.join(ws.root, 'sleep.pid'))
      ws.track(sleeper)
      expect(await becomesGone(sleeper)).toBe(true)
    })

    it('kills a plain `sleep 30` at the timeout, by signal', async () => {
      const outcome = await shell.run({ command: 'sleep 30', timeoutMs: 200 }, ws.context)
      expect(outcome.isError).toBe(true)
      // Killed, not ended by itself: a 30 s sleep that exited on its own would have exit code 0.
      expect(outcome.result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' })
    })
  })

  describe('when a foreground command leaves a process behind', () => {
    it('stops it with the call, since nobody recorded it', async () => {
      const outcome = await shell.run({ command: 'sleep 30 & echo $! > left.pid' }, ws.context)
      expect(outcome.isError).toBe(false)
      const leftover = await pidWrittenTo(path.join(ws.root, 'left.pid'))
      ws.track(leftover)
      expect(await becomesGone(leftover)).toBe(true)
      expect(ws.recorder.records).toEqual([])
    })
  })

  describe('when the call is cancelled', () => {
    it('kills the command and flags the outcome', async () => {
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 100)
      const outcome = await shell.run({ command: 'sleep 30' }, ws.contextWith({ signal: controller.signal }))
      expect(outcome).toMatchObject({ result: { cancelled: true, exitCode: null, signal: 'SIGKILL' }, isError: true })
    })
  })

  describe('when a command runs in the background', () => {
    it('records it as running with a live pid before returning, then records how it ended', async () => {
      // The command ends only when the test says so: the call must have returned while it still runs.
      const command = 'while [ ! -e go ]; do sleep 0.05; done; exit 3'
      const outcome = await shell.run({ command, background: true }, ws.context)
      expect(outcome.isError).toBe(false)
      const { shellRunId, pid } = outcome.result as BackgroundShellResult
      ws.track(pid)
      expect(shellRunId).toMatch(/^sh-[0-9a-f]{16}$/)

      // Recorded before the call returned, and a valid shell-run file.
      expect(ws.recorder.records).toHaveLength(1)
      const running = ws.recorder.records[0]
      expect(running).toMatchObject({
        shellRunId,
        sessionId: 'session-1',
        runId: 'run-1',
        command,
        status: 'running',
        pid,
      })
      expect(E.isRight(decodeWith(ShellRun)(running))).toBe(true)
      expect(() => process.kill(pid, 0)).not.toThrow()
      await writeFile(path.join(ws.root, 'go'), '')

      const ended = await ws.recorder.waitFor((run) => run.status !== 'running')
      expect(ended).toMatchObject({ shellRunId, pid, status: 'failed', exitCode: 3 })
      expect(ended.endedAt).toBeDefined()
      expect(E.isRight(decodeWith(ShellRun)(ended))).toBe(true)
      expect(ws.recorder.records.map((run) => run.status)).toEqual(['running', 'failed'])
    })

    it('records completed with exit code 0', async () => {
      const outcome = await shell.run({ command: 'true', background: true }, ws.context)
      ws.track((outcome.result as BackgroundShellResult).pid)
      const ended = await ws.recorder.waitFor((run) => run.status !== 'running')
      expect(ended).toMatchObject({ status: 'completed', exitCode: 0 })
      // Even an instant exit is recorded after, never before, its running record.
      expect(ws.recorder.records.map((run) => run.status)).toEqual(['running', 'completed'])
    })

    it('records killed when a signal ends it, e.g. its own timeoutMs', async () => {
      const outcome = await shell.run({ command: 'sleep 30', background: true, timeoutMs: 200 }, ws.context)
      ws.track((outcome.result as BackgroundShellResult).pid)
      const ended = await ws.recorder.waitFor((run) => run.status !== 'running')
      expect(ended).toMatchObject({ status: 'killed', exitCode: null })
    })

    it('runs in its own process group, recorded with the boot id and start ticks that name it', async () => {
      const outcome = await shell.run({ command: 'sleep 30', background: true }, ws.context)
      const { pid } = outcome.result as BackgroundShellResult
      ws.track(pid)
      expect(await processGroupOf(pid)).toBe(pid)
      expect(await processGroupOf(pid)).not.toBe(await processGroupOf(process.pid))
      const running = ws.recorder.records[0] as ShellRun
      const identity = await processIdentity(pid)
      expect(identity).not.toBeNull()
      expect(running).toMatchObject({ bootId: identity?.bootId, startTicks: identity?.startTicks })
      // Both survive into the final record, so the file names the process for good.
      process.kill(-pid, 'SIGKILL')
      const ended = await ws.recorder.waitFor((run) => run.status !== 'running')
      expect(ended).toMatchObject({ status: 'killed', bootId: identity?.bootId, startTicks: identity?.startTicks })
    })

    it('records no identity when the host cannot read one, and still records the run', async () => {
      const outcome = await shell.run(
        { command: 'sleep 30', background: true },
        ws.contextWith({ processIdentity: { identify: () => Promise.resolve(null) } }),
      )
      ws.track((outcome.result as BackgroundShellResult).pid)
      const running = ws.recorder.records[0] as ShellRun
      expect(running.status).toBe('running')
      expect('bootId' in running || 'startTicks' in running).toBe(false)
    })

    it('stops the command and fails the call when the shell run cannot be recorded', async () => {
      // Slow to fail, so the command has time to start a grandchild that must be stopped too.
      const failing: ShellRunRecorder = {
        record: () => () => delay(300).then(() => E.left({ message: 'disk full' })),
      }
      const outcome = await shell.run(
        { command: 'sleep 30 & echo $! > bg.pid; wait', background: true },
        ws.contextWith({ shellRuns: failing }),
      )
      expect(outcome).toEqual({
        result: 'The background command was stopped because it could not be recorded: disk full',
        isError: true,
      })
      const sleeper = await pidWrittenTo(path.join(ws.root, 'bg.pid'))
      ws.track(sleeper)
      expect(await becomesGone(sleeper)).toBe(true)
    })

    it('starts nothing when the call is already cancelled', async () => {
      const controller = new AbortController()
      controller.abort()
      const outcome = await shell.run(
        { command: 'echo ran > ran.txt', background: true },
        ws.contextWith({ signal: controller.signal }),
      )
      expect(outcome).toEqual({ result: 'shell was cancelled before it started.', isError: true })
      await delay(200)
      await expect(readFile(path.join(ws.root, 'ran.txt'))).rejects.toThrow()
      expect(ws.recorder.records).toEqual([])
    })

    it('starts nothing when the session id cannot name a shell-run file', async () => {
      const outcome = await shell.run(
        { command: 'echo ran > ran.txt', background: true },
        ws.contextWith({ sessionId: '../evil' }),
      )
      expect(outcome.isError).toBe(true)
      expect(outcome.result).toMatch(/^The background command was not started because it could not be recorded: /)
      await delay(200)
      await expect(readFile(path.join(ws.root, 'ran.txt'))).rejects.toThrow()
    })
  })

  describe('when the arguments are wrong', () => {
    it.each([
      [{}, 'shell needs "command".'],
      [{ command: '' }, 'shell needs "command" to be a non-empty string.'],
      [{ command: ['ls'] }, 'shell needs "command" to be a non-empty string.'],
      [{ command: 'ls', background: 'yes' }, 'shell needs "background" to be true or false.'],
      [{ command: 'ls', timeoutMs: -1 }, 'shell needs "timeoutMs" to be a whole number from 1 to 3600000.'],
      [{ command: 'ls', timeoutMs: 1.5 }, 'shell needs "timeoutMs" to be a whole number from 1 to 3600000.'],
      [{ command: 'ls', cwd: '/' }, 'shell does not take "cwd"; it takes "command", "background", "timeoutMs".'],
    ])('answers %j with a sentence and runs nothing', async (args, sentence) => {
      expect(await shell.run(args, ws.context)).toEqual({ result: sentence, isError: true })
      expect(ws.recorder.records).toEqual([])
    })
  })

  describe('when the workspace is gone', () => {
    it('answers with a sentence instead of spawning', async () => {
      const outcome = await shell.run({ command: 'true' }, ws.contextWith({ cwd: path.join(ws.root, 'missing') }))
      expect(outcome).toMatchObject({ isError: true })
      expect(outcome.result).toMatch(/is not available: no such file or directory\.$/)
    })
  })
})
