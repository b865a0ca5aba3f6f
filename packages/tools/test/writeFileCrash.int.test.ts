import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import * as path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeWriteFileTool } from '../src/index.js'
import { givenWorkspaceUnsafe, type Workspace } from './givenWorkspace.js'

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/index.js')

// Big enough that one write takes many syscalls (Node writes 512 KiB at a time), so kills land inside them.
const SIZE = 4 * 1024 * 1024
// A fixed count, not a time budget: a busy machine makes the test slower, never weaker.
const ROUNDS = 16
const CEILING_MS = 30_000
const TARGET = 'gen.bin'
const TEMP_NAME = /^\.gen\.bin\.\d+\.[0-9a-f]{12}\.write_file\.tmp$/

// Generation k: a header naming k, then one marker letter; neighbouring generations differ in both, so a
// mix of two generations, an empty file and a cut-off one all differ from every complete generation.
// The child script below builds the same bytes.
const generation = (k: number): Buffer => {
  const head = `gen ${k}\n`
  return Buffer.from(head + String.fromCharCode(65 + (k % 26)).repeat(SIZE - head.length))
}

// Plain node on the built output, as a host runs it: only a separate process can be SIGKILLed mid-write.
// Pipes are written synchronously on Linux, so a `start k` line is in the pipe before write k begins.
const script = `
import { makeWriteFileTool } from ${JSON.stringify(dist)}
const [cwd, target, size, first] = process.argv.slice(1)
const generation = (k) => {
  const head = 'gen ' + k + '\\n'
  return head + String.fromCharCode(65 + (k % 26)).repeat(Number(size) - head.length)
}
const tool = makeWriteFileTool()
const context = {
  sessionId: 'session-1', runId: 'run-1', cwd, toolCallId: 'call-1',
  shellRuns: { record: () => async () => ({ _tag: 'Right', right: undefined }) },
  processIdentity: { identify: async () => null },
}
for (let k = Number(first); ; k += 1) {
  const content = generation(k)
  process.stdout.write('start ' + k + '\\n')
  const outcome = await tool.run({ path: target, content }, context)
  if (outcome.isError) {
    process.stdout.write('failed ' + JSON.stringify(outcome.result) + '\\n')
    process.exit(1)
  }
  process.stdout.write('done ' + k + '\\n')
}
`

interface Round {
  readonly started: ReadonlyArray<number>
  readonly done: ReadonlyArray<number>
  readonly failure: string | undefined
}

/**
 * Runs the writer from generation `first` and SIGKILLs it `fraction` of one write's duration after it
 * starts its third write. The duration is that of the second write (the first one is slowed by warm-up),
 * so the kills spread over every step of a write, however fast or busy the machine is.
 */
const killWriterMidway = async (root: string, first: number, fraction: number): Promise<Round> => {
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', script, root, TARGET, String(SIZE), String(first)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stdout = ''
  let stderr = ''
  const arrivals = new Map<string, number>()
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    for (const line of stdout.split('\n').slice(0, -1)) if (!arrivals.has(line)) arrivals.set(line, Date.now())
  })
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  // 'close' comes after the pipes are drained, so every line written before the kill is read.
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()))
  try {
    const deadline = Date.now() + CEILING_MS
    while (!arrivals.has(`start ${first + 2}`) && child.exitCode === null && Date.now() < deadline) await delay(2)
    const began = arrivals.get(`start ${first + 1}`)
    const ended = arrivals.get(`done ${first + 1}`)
    if (child.exitCode === null && began !== undefined && ended !== undefined) {
      await delay(Math.round(fraction * (ended - began)))
    }
  } finally {
    child.kill('SIGKILL')
  }
  const ceiling = new AbortController()
  const tooLate = delay(CEILING_MS, undefined, { signal: ceiling.signal }).then(() => {
    throw new Error('the killed writer did not exit')
  })
  await Promise.race([closed, tooLate]).finally(() => ceiling.abort())
  const lines = stdout.split('\n')
  const numbers = (prefix: string): Array<number> =>
    lines.filter((line) => line.startsWith(prefix)).map((line) => Number(line.slice(prefix.length)))
  const failed = lines.find((line) => line.startsWith('failed '))
  return {
    started: numbers('start '),
    done: numbers('done '),
    failure: failed ?? (child.signalCode === 'SIGKILL' ? undefined : `exited ${child.exitCode}: ${stderr}`),
  }
}

const describeBytes = (bytes: Buffer): string =>
  `${bytes.length} bytes, starting ${JSON.stringify(bytes.subarray(0, 12).toString('latin1'))}`

describe('write_file', () => {
  let ws: Workspace
  beforeEach(async () => {
    // turbo builds before testing; a missing dist is a broken pipeline, not a reason to skip.
    expect(existsSync(dist)).toBe(true)
    ws = await givenWorkspaceUnsafe()
  })
  afterEach(async () => {
    await ws.cleanup()
  })

  describe('when its process is SIGKILLed at random moments while it rewrites one big file', () => {
    it('leaves the old generation or the new one, whole, and only temp-named leftovers', async () => {
      const tool = makeWriteFileTool()
      expect(await tool.run({ path: TARGET, content: generation(0).toString() }, ws.context)).toMatchObject({
        isError: false,
      })
      let current = 0
      let next = 1
      let rounds = 0
      let killedMidWrite = 0
      let killedWithTemp = 0
      while (rounds < ROUNDS) {
        // A little past one write's duration, so some kills land between writes too.
        const fraction = Math.random() * 1.2
        const round = await killWriterMidway(ws.root, next, fraction)
        const where = `round ${rounds} (killed ${fraction.toFixed(2)} of a write after generation ${next + 2} began)`
        expect(round.failure, where).toBeUndefined()
        const lastDone = round.done.at(-1) ?? current
        const inFlight = round.started.find((k) => !round.done.includes(k))
        const bytes = await readFile(path.join(ws.root, TARGET))
        const found = [lastDone, ...(inFlight === undefined ? [] : [inFlight])].find((k) => bytes.equals(generation(k)))
        expect(found, `${where}: ${describeBytes(bytes)}; expected generation ${lastDone} or ${inFlight}`).toBeDefined()
        const leftovers = (await readdir(ws.root)).filter((name) => name !== TARGET)
        for (const name of leftovers) expect(name, where).toMatch(TEMP_NAME)
        if (leftovers.length > 0) killedWithTemp += 1
        if (inFlight !== undefined) killedMidWrite += 1
        current = found ?? current
        next = Math.max(next, ...round.started) + 1
        rounds += 1
      }
      // The kills must have hit writes in progress, some between creating and renaming the temp file, or
      // the rounds proved nothing.
      expect(killedMidWrite).toBeGreaterThanOrEqual(Math.ceil(rounds / 4))
      expect(killedWithTemp).toBeGreaterThan(0)
      // The next write removes the temps of the writers that were killed: their pids are gone.
      expect(await tool.run({ path: TARGET, content: 'final' }, ws.context)).toEqual({
        result: { path: TARGET, bytes: 5 },
        isError: false,
      })
      expect(await readdir(ws.root)).toEqual([TARGET])
      expect(await readFile(path.join(ws.root, TARGET), 'utf8')).toBe('final')
    }, 600_000)
  })
})
