/**
 * Startup recovery of supervised foreground shell runs (records with `operationId`): the status comes
 * from the supervisor's `exit` file when it exists, else `failed` once the supervisor is gone. Real
 * processes: a SIGKILLed agent whose command runs on, and sleepers standing in for supervisors.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import * as E from 'fp-ts/lib/Either.js'
import { afterEach, describe, expect, it } from 'vitest'
import type { ShellRun } from '@maka/events'
import { processIdentity } from '@maka/host-inspector'
import { shellRunDirOf } from '@maka/tools'
import type { RecoveryAction } from '../src/index.js'
import { makeRecoverShellRuns } from '../src/recoverShellRuns.js'
import { trackWorlds, type World } from './support/world.js'

const world = trackWorlds()
const here = dirname(fileURLToPath(import.meta.url))
const CEILING_MS = 30_000
const NOW = new Date('2026-03-01T12:00:00.000Z')

const children: Array<ChildProcess> = []
// Process groups a test started through a supervisor (the command's shell leads its own group).
const groups: Array<number> = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
  for (const pid of groups.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

const eventually = async (what: string, check: () => boolean | Promise<boolean>): Promise<void> => {
  const deadline = Date.now() + CEILING_MS
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`)
    await delay(20)
  }
}

const closed = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((done) => child.once('close', () => done()))

const sleeper = async (): Promise<number> => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' })
  children.push(child)
  return new Promise((done, fail) => {
    child.once('spawn', () => (child.pid === undefined ? fail(new Error('no pid')) : done(child.pid)))
    child.once('error', fail)
  })
}

const deadPid = async (): Promise<number> => {
  const child = spawn('true', [], { stdio: 'ignore' })
  const pid = child.pid
  await new Promise((done) => child.once('exit', done))
  if (pid === undefined) throw new Error('true did not start')
  return pid
}

const SESSION = 'session-sup'
const OPERATION = 'run-sup-o3'

const recordOf = async (shellRunId: string, pid: number, extra: Partial<ShellRun> = {}): Promise<ShellRun> => {
  const identity = await processIdentity(pid)
  return {
    shellRunId,
    sessionId: SESSION,
    runId: 'run-sup',
    command: 'make',
    status: 'running',
    pid,
    startedAt: '2026-03-01T11:00:00.000Z',
    operationId: OPERATION,
    ...(identity === null ? {} : { bootId: identity.bootId, startTicks: identity.startTicks }),
    ...extra,
  } as ShellRun
}

const write = async (w: World, record: ShellRun): Promise<void> => {
  expect(E.isRight(await w.stores.shellRuns.write(record)())).toBe(true)
}

const writeExit = async (w: World, shellRunId: string, exit: Record<string, unknown>): Promise<void> => {
  const dir = shellRunDirOf(w.dataDir, SESSION, shellRunId)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'exit'), JSON.stringify(exit))
}

const listed = async (w: World): Promise<ReadonlyArray<ShellRun>> => {
  const all = await w.stores.shellRuns.list(SESSION)()
  if (E.isLeft(all)) throw new Error(all.left._tag)
  return all.right.flatMap((entry) => ('shellRun' in entry ? [entry.shellRun] : []))
}

const recover = async (w: World, options: { withDir?: boolean; mode?: 'survey' | 'repair' } = {}) => {
  const step = makeRecoverShellRuns({
    stores: w.stores,
    clock: () => NOW,
    ...(options.withDir === false
      ? {}
      : { shellRunDir: (sessionId: string, shellRunId: string) => shellRunDirOf(w.dataDir, sessionId, shellRunId) }),
  })
  const actions: Array<RecoveryAction> = []
  const pending = await step(SESSION, actions, options.mode ?? 'repair')
  return { actions, pending }
}

describe('recoverShellRuns, for a supervised foreground run (its record names an operation)', () => {
  describe('when the supervisor wrote exit', () => {
    it.each([
      ['exit code 0 → completed', { exitCode: 0, signal: null }, 'completed', 0],
      ['another exit code → failed', { exitCode: 2, signal: null }, 'failed', 2],
      ['a signal → killed', { exitCode: null, signal: 'SIGKILL', timedOut: true }, 'killed', null],
    ])('takes the status from it: %s', async (_, end, status, exitCode) => {
      const w = await world()
      await write(w, await recordOf('sh-ended', await deadPid()))
      await writeExit(w, 'sh-ended', { ...end, stdoutBytes: 0, stderrBytes: 0 })
      const { actions, pending } = await recover(w)
      expect(pending).toEqual([{ kind: 'fail_shell_run', shellRunId: 'sh-ended' }])
      expect(actions).toEqual([
        {
          sessionId: SESSION,
          shellRunId: 'sh-ended',
          action: 'shell_run_orphaned',
          detail: `its supervisor reported its end (${status})`,
        },
      ])
      const [record] = await listed(w)
      expect(record).toMatchObject({ status, exitCode, endedAt: NOW.toISOString(), operationId: OPERATION })
      // Idempotent: the record is no longer running.
      expect((await recover(w)).actions).toEqual([])
    })

    it('takes it even while the supervisor has not ended yet (it writes exit, then ends)', async () => {
      const w = await world()
      await write(w, await recordOf('sh-ending', await sleeper()))
      await writeExit(w, 'sh-ending', { exitCode: 0, signal: null, stdoutBytes: 0, stderrBytes: 0 })
      await recover(w)
      expect((await listed(w))[0]).toMatchObject({ status: 'completed', exitCode: 0 })
    })
  })

  describe('when there is no exit file', () => {
    it('leaves the record running while the supervisor lives, and fails it once the supervisor is gone', async () => {
      const w = await world()
      const pid = await sleeper()
      await write(w, await recordOf('sh-live', pid))
      expect(await recover(w)).toEqual({ actions: [], pending: [] })
      expect((await listed(w))[0]?.status).toBe('running')

      process.kill(pid, 'SIGKILL')
      await eventually('the supervisor stand-in to be gone', async () => (await processIdentity(pid)) === null)
      const { actions } = await recover(w)
      expect(actions).toEqual([
        {
          sessionId: SESSION,
          shellRunId: 'sh-live',
          action: 'shell_run_orphaned',
          detail: 'its supervisor is gone and reported no end',
        },
      ])
      const [record] = await listed(w)
      expect(record).toMatchObject({ status: 'failed', endedAt: NOW.toISOString() })
      expect(record?.exitCode).toBeUndefined()
    })

    it('fails it when the exit file is malformed and the supervisor is gone', async () => {
      const w = await world()
      await write(w, await recordOf('sh-bad', await deadPid()))
      await writeExit(w, 'sh-bad', { exitCode: 0 })
      await recover(w)
      expect((await listed(w))[0]).toMatchObject({ status: 'failed' })
    })
  })

  describe('when recovery is not told where the files are', () => {
    it('judges the record by its supervisor alone', async () => {
      const w = await world()
      await write(w, await recordOf('sh-nodir', await deadPid()))
      await writeExit(w, 'sh-nodir', { exitCode: 0, signal: null, stdoutBytes: 0, stderrBytes: 0 })
      await recover(w, { withDir: false })
      expect((await listed(w))[0]).toMatchObject({ status: 'failed' })
    })
  })

  describe('when surveying', () => {
    it('reports the repair and writes nothing', async () => {
      const w = await world()
      const record = await recordOf('sh-survey', await deadPid())
      await write(w, record)
      await writeExit(w, 'sh-survey', { exitCode: 0, signal: null, stdoutBytes: 0, stderrBytes: 0 })
      const { actions, pending } = await recover(w, { mode: 'survey' })
      expect(pending).toEqual([{ kind: 'fail_shell_run', shellRunId: 'sh-survey' }])
      expect(actions).toEqual([])
      expect(await listed(w)).toEqual([record])
    })
  })

  describe('when the agent was SIGKILLed while its command ran (a real supervisor)', () => {
    // The agent: the built tools in a plain node process, recording through the real JSONL store.
    const agentScript = `
import { makeShellTool, shellRunDirOf } from '@maka/tools'
import { processIdentity } from '@maka/host-inspector'
import { makeFileStores } from '@maka/store-jsonl'
const [cwd, dataDir, command] = process.argv.slice(1)
const stores = makeFileStores(dataDir)
const context = {
  sessionId: '${SESSION}', runId: 'run-sup', cwd, toolCallId: 'call-1', operationId: '${OPERATION}',
  shellRunDir: (id) => shellRunDirOf(dataDir, '${SESSION}', id),
  shellRuns: { record: (run) => async () => {
    const written = await stores.shellRuns.write(run)()
    return written._tag === 'Right' ? written : { _tag: 'Left', left: { message: written.left._tag } }
  } },
  processIdentity: { identify: processIdentity },
}
await makeShellTool().run({ command }, context)
`

    it('leaves the record running while the command runs, then completes it from exit', async () => {
      const w = await world()
      const command = 'echo $$ > started; while [ ! -e release ]; do sleep 0.05; done; echo out'
      // Run from this package, so the bare specifiers resolve to the built packages it depends on.
      const agent = spawn(
        process.execPath,
        ['--input-type=module', '-e', agentScript, w.workspace, w.dataDir, command],
        {
          cwd: resolve(here, '..'),
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      )
      children.push(agent)
      await eventually('the command to start', () => existsSync(join(w.workspace, 'started')))
      const shellPid = Number((await readFile(join(w.workspace, 'started'), 'utf8')).trim())
      groups.push(shellPid)
      agent.kill('SIGKILL')
      await closed(agent)

      const [running] = await listed(w)
      expect(running).toMatchObject({ status: 'running', operationId: OPERATION })
      expect(await recover(w)).toEqual({ actions: [], pending: [] })

      await writeFile(join(w.workspace, 'release'), '')
      const dir = shellRunDirOf(w.dataDir, SESSION, running?.shellRunId ?? '')
      await eventually('the exit file', () => existsSync(join(dir, 'exit')))
      await eventually('the command to end', async () => (await processIdentity(shellPid)) === null)
      const { actions } = await recover(w)
      expect(actions.map((a) => a.detail)).toEqual(['its supervisor reported its end (completed)'])
      expect((await listed(w))[0]).toMatchObject({ status: 'completed', exitCode: 0 })
    })
  })
})
