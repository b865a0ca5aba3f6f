import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { decodeWith, ShellRun } from '@maka/events'
import { observeReattach, processIdentity } from '@maka/host-inspector'
import * as E from 'fp-ts/lib/Either.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  makeShellTool,
  readShellRunExit,
  SHELL_OUTPUT_CAP_BYTES,
  shellResultFromFiles,
  shellRunDirOf,
  type ShellRunRecorder,
  type ToolContext,
} from '../src/index.js'
import { becomesGone, givenWorkspaceUnsafe, isRunning, pidWrittenTo, type Workspace } from './givenWorkspace.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const dist = path.resolve(here, '../dist/index.js')
const supervisorScript = path.resolve(here, '../dist/shellSupervisor.js')
const inspectorDist = path.resolve(here, '../node_modules/@maka/host-inspector/dist/index.js')
const CEILING_MS = 30_000

const shell = makeShellTool()

/** Waits until `check` holds, polling; fails after the ceiling. */
const eventually = async (what: string, check: () => Promise<boolean> | boolean): Promise<void> => {
  const deadline = Date.now() + CEILING_MS
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`)
    await delay(20)
  }
}

// 'close', not 'exit': by then everything the child wrote to its pipes has been read.
const exited = (child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> =>
  new Promise((resolve) =>
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal })),
  )

// The agent as a separate process, on the built output as a host runs it, so a test can SIGKILL it.
// Each record it writes goes to stdout as one `record <json>` line; the outcome as `outcome <json>`.
const agentScript = `
import { makeShellTool, shellRunDirOf } from ${JSON.stringify(dist)}
import { processIdentity } from ${JSON.stringify(inspectorDist)}
const [cwd, dataDir, command] = process.argv.slice(1)
const context = {
  sessionId: 'session-1', runId: 'run-1', cwd, toolCallId: 'call-1', operationId: 'run-1-o3',
  shellRunDir: (id) => shellRunDirOf(dataDir, 'session-1', id),
  shellRuns: { record: (run) => async () => {
    process.stdout.write('record ' + JSON.stringify(run) + '\\n')
    // An agent that stalls between its durable record and "go", so a test can kill it in that window.
    if (process.env.HANG_AFTER_RECORD === '1') await new Promise(() => setInterval(() => undefined, 1000))
    return { _tag: 'Right', right: undefined }
  } },
  processIdentity: { identify: processIdentity },
}
const outcome = await makeShellTool().run({ command }, context)
process.stdout.write('outcome ' + JSON.stringify(outcome) + '\\n')
`

interface Agent {
  readonly child: ChildProcess
  readonly records: () => ReadonlyArray<ShellRun>
  readonly lines: () => ReadonlyArray<string>
}

const startAgent = (cwd: string, dataDir: string, command: string, hangAfterRecord = false): Agent => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', agentScript, cwd, dataDir, command], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, HANG_AFTER_RECORD: hangAfterRecord ? '1' : '0' },
  })
  let stdout = ''
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  const lines = () => stdout.split('\n').slice(0, -1)
  return {
    child,
    lines,
    records: () =>
      lines()
        .filter((line) => line.startsWith('record '))
        .map((line) => JSON.parse(line.slice('record '.length)) as ShellRun),
  }
}

describe('supervised shell', () => {
  let ws: Workspace
  let dataDir: string
  let supervised: ToolContext
  beforeEach(async () => {
    ws = await givenWorkspaceUnsafe()
    dataDir = path.join(path.dirname(ws.root), 'data')
    supervised = ws.contextWith({
      operationId: 'run-1-o3',
      shellRunDir: (id) => shellRunDirOf(dataDir, 'session-1', id),
    })
  })
  afterEach(async () => {
    await ws.cleanup()
  })

  const dirOf = (run: ShellRun): string => shellRunDirOf(dataDir, run.sessionId, run.shellRunId)

  describe('when a command runs to its end', () => {
    // The same calls through the unsupervised tool and the supervised one give the same outcome.
    it.each([
      ['stdout, stderr and exit code 0', { command: 'pwd; echo oops >&2' }],
      ['a non-zero exit', { command: 'echo partial; exit 7' }],
      ['no output at all', { command: 'true' }],
      [
        'a flood of stdout, capped with a note',
        { command: `head -c ${SHELL_OUTPUT_CAP_BYTES + 100} /dev/zero | tr '\\0' y` },
      ],
      ['a flood of stderr, capped with a note', { command: `head -c ${SHELL_OUTPUT_CAP_BYTES * 3} /dev/zero >&2` }],
      // A two-byte character cut by the cap: both decode the kept bytes the same way.
      ['a character cut by the cap', { command: `head -c ${SHELL_OUTPUT_CAP_BYTES - 1} /dev/zero; printf 'éé'` }],
      ['a signal', { command: 'kill -TERM $$' }],
      ['a timeout', { command: 'sleep 30', timeoutMs: 200 }],
      ['a timeout of a group', { command: 'sleep 30 & wait', timeoutMs: 200 }],
    ])('gives the same result as an unsupervised call: %s', async (_, args) => {
      const plain = await shell.run(args, ws.context)
      const watched = await shell.run(args, supervised)
      expect(watched).toEqual(plain)
      // Key order too: the result becomes the response row's bytes.
      expect(JSON.stringify(watched)).toBe(JSON.stringify(plain))
    })

    it('records the run with its operationId and the supervisor named exactly, then how it ended', async () => {
      const outcome = await shell.run({ command: 'echo out; exit 3' }, supervised)
      expect(outcome).toEqual({ result: { exitCode: 3, signal: null, stdout: 'out\n', stderr: '' }, isError: true })
      const [running, ended] = ws.recorder.records as [ShellRun, ShellRun]
      expect(ws.recorder.records).toHaveLength(2)
      expect(running).toMatchObject({
        sessionId: 'session-1',
        runId: 'run-1',
        command: 'echo out; exit 3',
        status: 'running',
        operationId: 'run-1-o3',
      })
      expect(running.shellRunId).toMatch(/^sh-[0-9a-f]{16}$/)
      // The real identity port named the supervisor while it waited for "go".
      expect(running.bootId).toBeDefined()
      expect(running.startTicks).toBeDefined()
      expect(ended).toEqual({ ...running, status: 'failed', exitCode: 3, endedAt: ended.endedAt })
      expect(E.isRight(decodeWith(ShellRun)(ended))).toBe(true)
      // The files stay, and give the same result again.
      const dir = dirOf(running)
      expect(await shellResultFromFiles(dir)()).toEqual(E.right(outcome.result))
      expect(await readShellRunExit(dir)()).toEqual(
        E.right({ exitCode: 3, signal: null, stdoutBytes: 4, stderrBytes: 0 }),
      )
      for (const file of ['stdout', 'stderr', 'exit']) {
        expect((await stat(path.join(dir, file))).mode & 0o777).toBe(0o600)
      }
    })

    it('records completed for exit 0 and killed for a signal', async () => {
      await shell.run({ command: 'true' }, supervised)
      await shell.run({ command: 'sleep 30', timeoutMs: 100 }, supervised)
      expect(ws.recorder.records.map((run) => [run.status, run.exitCode])).toEqual([
        ['running', undefined],
        ['completed', 0],
        ['running', undefined],
        ['killed', null],
      ])
    })

    it('exports the agent pid to the command as MAKA_AGENT_PID', async () => {
      const outcome = await shell.run({ command: 'echo $MAKA_AGENT_PID' }, supervised)
      expect(outcome.result).toMatchObject({ stdout: `${process.pid}\n` })
    })

    it('runs the command in the workspace, in a process group of its own, apart from the agent', async () => {
      const outcome = await shell.run({ command: 'pwd; echo $$ > sh.pid; ps -o pgid= -p $$; exit 0' }, supervised)
      const pid = await pidWrittenTo(path.join(ws.root, 'sh.pid'))
      const [cwd, pgid] = (outcome.result as { stdout: string }).stdout.split('\n')
      expect(cwd).toBe(ws.root)
      expect(Number(pgid?.trim())).toBe(pid)
    })
  })

  describe('when the call is cancelled', () => {
    it('kills the command group, flags the outcome as today, and the supervisor still writes exit', async () => {
      const controller = new AbortController()
      const pending = shell.run(
        { command: 'sleep 30 & echo $! > sleep.pid; wait' },
        ws.contextWith({ ...supervised, signal: controller.signal }),
      )
      const sleeper = await pidWrittenTo(path.join(ws.root, 'sleep.pid'))
      ws.track(sleeper)
      controller.abort()
      const outcome = await pending
      expect(outcome).toEqual({
        result: { exitCode: null, signal: 'SIGKILL', stdout: '', stderr: '', cancelled: true },
        isError: true,
      })
      expect(await becomesGone(sleeper)).toBe(true)
      const running = ws.recorder.records[0] as ShellRun
      expect(await readShellRunExit(dirOf(running))()).toEqual(
        E.right({ exitCode: null, signal: 'SIGKILL', stdoutBytes: 0, stderrBytes: 0 }),
      )
      expect(ws.recorder.records[1]).toMatchObject({ status: 'killed', exitCode: null })
    })
  })

  describe('when the record cannot be written', () => {
    it('never starts the command, and the supervisor ends', async () => {
      const tried: Array<ShellRun> = []
      const failing: ShellRunRecorder = {
        record: (run) => () => {
          tried.push(run)
          return Promise.resolve(E.left({ message: 'disk full' }))
        },
      }
      const outcome = await shell.run(
        { command: 'echo ran > ran.txt' },
        ws.contextWith({ ...supervised, shellRuns: failing }),
      )
      expect(outcome).toEqual({
        result: 'The command was not started because it could not be recorded: disk full',
        isError: true,
      })
      const supervisor = (tried[0] as ShellRun).pid
      ws.track(supervisor)
      // Waited on the supervisor's end, not on a clock: once it is gone nothing can start the command.
      expect(await becomesGone(supervisor)).toBe(true)
      expect(existsSync(path.join(ws.root, 'ran.txt'))).toBe(false)
      expect(existsSync(path.join(dirOf(tried[0] as ShellRun), 'exit'))).toBe(false)
    })

    it('starts nothing when the host names no folder for the files', async () => {
      const outcome = await shell.run({ command: 'echo ran > ran.txt' }, ws.contextWith({ operationId: 'run-1-o3' }))
      expect(outcome).toEqual({
        result:
          'The command was not started because it could not be recorded: this host names no folder for its files.',
        isError: true,
      })
      expect(ws.recorder.records).toEqual([])
      expect(existsSync(path.join(ws.root, 'ran.txt'))).toBe(false)
    })
  })

  describe('the supervisor', () => {
    it('starts nothing when its control pipe ends before "go" (the agent died)', async () => {
      const dir = shellRunDirOf(dataDir, 'session-1', 'sh-direct')
      await mkdir(dir, { recursive: true })
      const config = { dir, cwd: ws.root, command: 'echo ran > ran.txt', timeoutMs: 60_000, capBytes: 10, agentPid: 1 }
      const supervisor = spawn(process.execPath, [supervisorScript, JSON.stringify(config)], {
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
      })
      ws.track(supervisor.pid as number)
      supervisor.stdin?.end()
      expect(await exited(supervisor)).toEqual({ code: 3, signal: null })
      expect(existsSync(path.join(ws.root, 'ran.txt'))).toBe(false)
      expect(existsSync(path.join(dir, 'exit'))).toBe(false)
    })

    it('refuses files that already exist (O_EXCL) and starts nothing', async () => {
      const dir = shellRunDirOf(dataDir, 'session-1', 'sh-taken')
      await mkdir(dir, { recursive: true })
      await symlink(path.join(ws.outside, 'secret.txt'), path.join(dir, 'stdout'))
      const config = { dir, cwd: ws.root, command: 'echo ran > ran.txt', timeoutMs: 60_000, capBytes: 10, agentPid: 1 }
      const supervisor = spawn(process.execPath, [supervisorScript, JSON.stringify(config)], {
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
      })
      ws.track(supervisor.pid as number)
      // It refuses before it reads "go", so it may be gone by the time the byte is written: the pipe's
      // EPIPE is that race, not a failure (the exit code below is what the test checks).
      supervisor.stdin?.on('error', () => undefined)
      supervisor.stdin?.write('g')
      expect(await exited(supervisor)).toEqual({ code: 2, signal: null })
      expect(existsSync(path.join(ws.root, 'ran.txt'))).toBe(false)
      expect(await readFile(path.join(ws.outside, 'secret.txt'), 'utf8')).toBe('outside\n')
    })
  })

  describe('when the agent is killed with SIGKILL after its record and before "go"', () => {
    it('never starts the command; the supervisor ends and the run is lost', async () => {
      const agent = startAgent(ws.root, dataDir, 'echo ran > ran.txt', true)
      await eventually('the running record', () => agent.records().length === 1)
      const running = agent.records()[0] as ShellRun
      ws.track(running.pid)
      agent.child.kill('SIGKILL')
      await exited(agent.child)
      // The pipe's end reaches the supervisor, which exits: waited on, not slept for.
      expect(await becomesGone(running.pid)).toBe(true)
      expect(existsSync(path.join(ws.root, 'ran.txt'))).toBe(false)
      expect(await observeReattach(running, dirOf(running))).toBe('lost')
    })
  })

  describe('when the agent is killed with SIGKILL while the command runs', () => {
    it('leaves the command running to its end, and exit appears with its output', async () => {
      const command = 'echo $$ > started; while [ ! -e release ]; do sleep 0.05; done; echo out; echo err >&2; exit 5'
      const agent = startAgent(ws.root, dataDir, command)
      // `started` exists only after "go", which follows the durable record.
      const shellPid = await pidWrittenTo(path.join(ws.root, 'started'))
      ws.track(shellPid)
      await eventually('the running record', () => agent.records().length === 1)
      const running = agent.records()[0] as ShellRun
      expect(running).toMatchObject({ status: 'running', operationId: 'run-1-o3' })
      ws.track(running.pid)
      agent.child.kill('SIGKILL')
      expect(await exited(agent.child)).toEqual({ code: null, signal: 'SIGKILL' })

      const dir = dirOf(running)
      expect(await isRunning(shellPid)).toBe(true)
      expect(await isRunning(running.pid)).toBe(true)
      expect(existsSync(path.join(dir, 'exit'))).toBe(false)
      expect(await observeReattach(running, dir)).toBe('running')

      await writeFile(path.join(ws.root, 'release'), '')
      await eventually('the exit file', () => existsSync(path.join(dir, 'exit')))
      expect(await observeReattach(running, dir)).toBe('exited')
      expect(await shellResultFromFiles(dir)()).toEqual(
        E.right({ exitCode: 5, signal: null, stdout: 'out\n', stderr: 'err\n' }),
      )
      expect(await becomesGone(running.pid)).toBe(true)
      expect(await observeReattach(running, dir)).toBe('exited')
      // The agent died before it could record the end: its last record still says running.
      expect(agent.records().map((run) => run.status)).toEqual(['running'])
    })

    it('observes the run as lost when its supervisor is SIGKILLed before it wrote exit', async () => {
      const command = 'echo $$ > started; while [ ! -e release ]; do sleep 0.05; done; echo out'
      const agent = startAgent(ws.root, dataDir, command)
      const shellPid = await pidWrittenTo(path.join(ws.root, 'started'))
      ws.track(shellPid)
      await eventually('the running record', () => agent.records().length === 1)
      const running = agent.records()[0] as ShellRun
      ws.track(running.pid)
      agent.child.kill('SIGKILL')
      await exited(agent.child)
      const dir = dirOf(running)
      expect(await observeReattach(running, dir)).toBe('running')
      process.kill(running.pid, 'SIGKILL')
      expect(await becomesGone(running.pid)).toBe(true)
      expect(await observeReattach(running, dir)).toBe('lost')
    })

    it('a command that kills its agent ($MAKA_AGENT_PID) still completes and writes exit', async () => {
      const agent = startAgent(ws.root, dataDir, 'kill -9 $MAKA_AGENT_PID; sleep 0.2; echo after')
      expect(await exited(agent.child)).toEqual({ code: null, signal: 'SIGKILL' })
      const running = agent.records()[0] as ShellRun
      ws.track(running.pid)
      const dir = dirOf(running)
      await eventually('the exit file', () => existsSync(path.join(dir, 'exit')))
      expect(await shellResultFromFiles(dir)()).toEqual(
        E.right({ exitCode: 0, signal: null, stdout: 'after\n', stderr: '' }),
      )
      expect(agent.lines().some((line) => line.startsWith('outcome '))).toBe(false)
    })
  })

  describe('shellResultFromFiles', () => {
    const given = async (files: Readonly<Record<string, string>>): Promise<string> => {
      const dir = shellRunDirOf(dataDir, 'session-1', 'sh-given')
      await mkdir(dir, { recursive: true })
      for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text)
      return dir
    }
    const exit = JSON.stringify({ exitCode: 0, signal: null, stdoutBytes: 3, stderrBytes: 0 })

    it('builds the result when the files match the exit file', async () => {
      const dir = await given({ exit, stdout: 'abc', stderr: '' })
      expect(await shellResultFromFiles(dir)()).toEqual(
        E.right({ exitCode: 0, signal: null, stdout: 'abc', stderr: '' }),
      )
    })

    it.each([
      ['no exit file', { stdout: 'abc', stderr: '' }, 'exit'],
      ['an exit file that is not JSON', { exit: '{', stdout: 'abc', stderr: '' }, 'exit'],
      ['an exit file of another shape', { exit: '{"exitCode":0}', stdout: 'abc', stderr: '' }, 'exit'],
      ['a missing stdout', { exit, stderr: '' }, 'stdout'],
      ['a stdout longer than the exit names', { exit, stdout: 'abcd', stderr: '' }, 'stdout'],
      ['a stderr the exit does not name', { exit, stdout: 'abc', stderr: 'x' }, 'stderr'],
    ])('fails on %s', async (_, files, file) => {
      const dir = await given(files)
      const read = await shellResultFromFiles(dir)()
      expect(read).toMatchObject({ _tag: 'Left', left: { _tag: 'ShellFilesUnreadable', file } })
    })

    it('does not follow a symbolic link', async () => {
      const dir = await given({ exit, stderr: '' })
      await symlink(path.join(ws.outside, 'secret.txt'), path.join(dir, 'stdout'))
      expect(await shellResultFromFiles(dir)()).toMatchObject({ left: { file: 'stdout' } })
    })
  })

  describe('shellRunDirOf', () => {
    it('names the run folder under the session, and refuses ids that are not path-safe', () => {
      expect(shellRunDirOf('/d', 's1', 'sh-1')).toBe('/d/sessions/s1/shell-runs/sh-1')
      expect(() => shellRunDirOf('/d', '../x', 'sh-1')).toThrow()
      expect(() => shellRunDirOf('/d', 's1', 'a/b')).toThrow()
    })
  })

  describe('the identity it records', () => {
    it('is the supervisor process, readable while it waits', async () => {
      // A recorder that reads the identity back at record time: the pid named is alive and matches.
      let matched: boolean | undefined
      const checking: ShellRunRecorder = {
        record: (run) => async () => {
          if (run.status === 'running') {
            const now = await processIdentity(run.pid)
            matched = now?.bootId === run.bootId && now?.startTicks === run.startTicks
          }
          return E.right(undefined)
        },
      }
      await shell.run({ command: 'true' }, ws.contextWith({ ...supervised, shellRuns: checking }))
      expect(matched).toBe(true)
    })
  })
})
