import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { becomesGone, givenWorkspaceUnsafe, isRunning, processGroupOf, type Workspace } from './givenWorkspace.js'

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/index.js')

// Plain node, not vitest: `fp-ts/function`-style imports pass vitest but crash node on built output,
// and only a separate process can show that a background command outlives the caller.
const script = `
import { builtinTools, makeToolRegistry, recoveryModesOf } from ${JSON.stringify(dist)}
const registry = makeToolRegistry(builtinTools())
const records = []
const context = {
  sessionId: 'session-1', runId: 'run-1', cwd: process.argv[1], toolCallId: 'call-1',
  shellRuns: { record: (run) => async () => { records.push(run); return { _tag: 'Right', right: undefined } } },
  processIdentity: { identify: async () => null },
}
const outcome = await registry.get('shell').run({ command: 'sleep 30', background: true }, context)
console.log(JSON.stringify({ names: registry.names(), modes: recoveryModesOf(registry), outcome, records }))
`

const runNode = (cwd: string): Promise<{ stdout: string }> =>
  new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script, cwd],
      { timeout: 60_000 },
      (error, stdout, stderr) => (error === null ? resolve({ stdout }) : reject(new Error(stderr))),
    )
  })

describe('built output', () => {
  let ws: Workspace
  beforeEach(async () => {
    // turbo builds before testing; a missing dist is a broken pipeline, not a reason to skip.
    expect(existsSync(dist)).toBe(true)
    ws = await givenWorkspaceUnsafe()
  })
  afterEach(async () => {
    await ws.cleanup()
  })

  describe('when plain node imports dist and starts a background command', () => {
    it('exits without waiting for it, leaving the detached command running on its own', async () => {
      const { stdout } = await runNode(ws.root)
      const { names, modes, outcome, records } = JSON.parse(stdout) as {
        names: ReadonlyArray<string>
        modes: Readonly<Record<string, string>>
        outcome: { result: { pid: number }; isError: boolean }
        records: ReadonlyArray<{ status: string; pid: number }>
      }
      const { pid } = outcome.result
      ws.track(pid)
      expect(names).toEqual(['list_dir', 'read_file', 'shell', 'write_file'])
      expect(modes).toEqual({
        list_dir: 'replay_safe',
        read_file: 'replay_safe',
        shell: 'by_args',
        write_file: 'reconcile',
      })
      expect(outcome.isError).toBe(false)
      expect(records).toEqual([expect.objectContaining({ status: 'running', pid })])
      // The caller exited while its unref'd `sleep 30` still runs — it did not wait for it — and the
      // child survived the caller's exit, in its own process group.
      expect(await isRunning(pid)).toBe(true)
      expect(await processGroupOf(pid)).toBe(pid)
      process.kill(-pid, 'SIGKILL')
      expect(await becomesGone(pid)).toBe(true)
    }, 90_000)
  })
})
