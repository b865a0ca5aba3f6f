/**
 * Test support: temp data dirs and workspaces, sessions interrupted by SIGKILLing a real turn at a
 * crash point, and the ledgers on disk read back row by row.
 */
import { execFile, spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const CHILD = fileURLToPath(new URL('./interruptedChild.mjs', import.meta.url))
const STARTUP = fileURLToPath(new URL('./startupChild.mjs', import.meta.url))
const made: Array<string> = []

export const scratch = async (): Promise<{ readonly dataDir: string; readonly workspace: string }> => {
  const root = await mkdtemp(join(tmpdir(), 'maka-desktop-'))
  made.push(root)
  const workspace = join(root, 'work')
  await mkdir(workspace)
  await writeFile(join(workspace, 'notes.txt'), 'hello\n')
  return { dataDir: join(root, 'data'), workspace }
}

export const removeScratch = async (): Promise<void> => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
}

/** A session whose turn was SIGKILLed at `at` (after_tool_response resumes; after_function_call parks). */
export const interruptedSession = (
  dataDir: string,
  workspace: string,
  sessionId: string,
  at: 'after_tool_response' | 'after_function_call',
): Promise<void> =>
  new Promise((done, fail) => {
    const child = spawn(process.execPath, [CHILD, dataDir, sessionId, workspace, at], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error('the turn never reached its crash point'))
    }, 60_000)
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      if (chunk.includes('ready')) child.kill('SIGKILL')
    })
    child.on('close', (_code, signal) => {
      clearTimeout(timer)
      if (signal === 'SIGKILL') done()
      else fail(new Error(`the turn ended by itself (${String(signal)})`))
    })
  })

/** Runs one app instance's start-up in a child process; its report. */
export const startupInChild = (dataDir: string): Promise<Record<string, unknown>> =>
  new Promise((done, fail) => {
    execFile(process.execPath, [STARTUP, dataDir], { timeout: 90_000 }, (error, stdout) => {
      if (error !== null) fail(error)
      else done(JSON.parse(stdout) as Record<string, unknown>)
    })
  })

export interface Header {
  readonly runId: string
  readonly status: string
  readonly failureClass?: string
  readonly continuationSource?: { readonly runId?: string }
}

export const runHeaders = async (dataDir: string, sessionId: string): Promise<ReadonlyArray<Header>> => {
  const dir = join(dataDir, 'sessions', sessionId, 'runs')
  const ids = await readdir(dir)
  return Promise.all(ids.map(async (id) => JSON.parse(await readFile(join(dir, id, 'run.json'), 'utf8')) as Header))
}

export const ledgerRows = async (
  dataDir: string,
  sessionId: string,
  runId: string,
): Promise<ReadonlyArray<Record<string, unknown>>> =>
  (await readFile(join(dataDir, 'sessions', sessionId, 'runs', runId, 'runtime-events.jsonl'), 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)

/** Polls `probe` until it returns a value (generous ceiling: the machine is shared). */
export const waitFor = async <A>(probe: () => Promise<A | undefined> | A | undefined, what: string): Promise<A> => {
  const deadline = Date.now() + 60_000
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
