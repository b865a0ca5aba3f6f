/**
 * Test support: where the real servers' entry points are installed (devDependencies, never fetched
 * at test time), the toy server and the hold proxy of the fixtures, temp dirs, and a tool context.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ToolContext } from '@maka/tools'

const require = createRequire(import.meta.url)
const entryOf = (name: string): string => join(dirname(require.resolve(`${name}/package.json`)), 'dist', 'index.js')

/** `node <this> DIR…`: the filesystem server, confined to the directories given. */
export const FILESYSTEM_SERVER = entryOf('@modelcontextprotocol/server-filesystem')
/** `node <this> [stdio|streamableHttp]`: the everything server. */
export const EVERYTHING_SERVER = entryOf('@modelcontextprotocol/server-everything')
/** `node <this> [--variant a|b] [--log FILE]`: the toy server of the fixtures. */
export const TOY_SERVER = fileURLToPath(new URL('./fixtures/toyServer.mjs', import.meta.url))
/** `node <this> DIR -- command args…`: the hold proxy of the fixtures. */
export const HOLD_PROXY = fileURLToPath(new URL('./fixtures/holdProxy.mjs', import.meta.url))

const made: Array<string> = []

/** A fresh temp dir, removed by `removeScratch`. */
export const scratchDir = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'maka-mcp-test-'))
  made.push(dir)
  return dir
}

/** Removes every temp dir made by `scratchDir`. */
export const removeScratch = async (): Promise<void> => {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
}

/** A tool context for a call outside a run. */
export const contextFor = (cwd: string, extra: Partial<ToolContext> = {}): ToolContext => ({
  sessionId: 'session-1',
  runId: 'run-1',
  cwd,
  toolCallId: 'call-1',
  shellRuns: { record: () => () => Promise.resolve({ _tag: 'Right', right: undefined }) },
  processIdentity: { identify: () => Promise.resolve(null) },
  ...extra,
})

/** Polls until `check` is truthy, with a generous ceiling. */
export const waitFor = async <A>(what: string, check: () => A | Promise<A>, deadlineMs = 30_000): Promise<A> => {
  const end = Date.now() + deadlineMs
  while (Date.now() < end) {
    const value = await check()
    if (value) return value
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** The pid the toy server wrote first in its log. */
export const toyPidOf = (log: string): number => Number(/^pid (\d+)$/m.exec(log)?.[1] ?? Number.NaN)

/** True while a process with this pid exists. */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
