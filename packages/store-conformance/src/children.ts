/**
 * Real child processes for the suite: each runs `child/storeChild.mjs` under plain node against the
 * adapter's built module and speaks one JSON object per stdout line.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const CHILD = fileURLToPath(new URL('../child/storeChild.mjs', import.meta.url))

const CONTINUATION_WRITER = fileURLToPath(new URL('../child/continuationWriter.mjs', import.meta.url))

/**
 * What the continuation writer announced before it was killed: `{k, step}` just before each write
 * of continuation k and `{k, done}` just after it.
 */
export type WriterMessage = Readonly<Record<string, unknown>>

/**
 * Runs `child/continuationWriter.mjs` — continuations' writes in the executor's order, forever,
 * under plain node against the adapter's built module — until it announces `step` of the next
 * continuation, SIGKILLs it there (in the middle of that write) and resolves with what it said.
 */
export const killContinuationWriterAt = (
  adapter: { readonly module: string; readonly open: string },
  target: { readonly location: string; readonly sessionId: string; readonly sourceRunId: string },
  step: string,
): Promise<ReadonlyArray<WriterMessage>> =>
  new Promise((resolve, reject) => {
    const env = { ...process.env }
    delete env['NODE_OPTIONS']
    const input = JSON.stringify({ ...adapter, ...target })
    const child = spawn(process.execPath, [CONTINUATION_WRITER, input], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    const messages: Array<WriterMessage> = []
    let buffered = ''
    let stderr = ''
    let killed = false
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const message = JSON.parse(buffered.slice(0, nl)) as WriterMessage
        buffered = buffered.slice(nl + 1)
        messages.push(message)
        if (!killed && message['step'] === step) {
          killed = true
          child.kill('SIGKILL')
        }
      }
    })
    child.once('exit', (_code, signal) =>
      signal === 'SIGKILL' ? resolve(messages) : reject(new Error(`writer ended on its own: ${stderr}`)),
    )
  })
const READY_TIMEOUT_MS = 60_000

/** A running child and the messages it printed so far. */
export interface StoreChild {
  readonly pid: number
  readonly messages: ReadonlyArray<Record<string, unknown>>
  /** Resolves with the first message `accept` takes, waiting up to a generous ceiling. */
  readonly waitFor: (accept: (message: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>
  /** SIGKILLs the child and resolves once it is gone. */
  readonly kill: () => Promise<void>
  readonly exited: Promise<void>
}

const live = new Set<ChildProcess>()

/** Kills every child still running (afterAll). */
export const killAllChildren = (): void => {
  for (const child of live) child.kill('SIGKILL')
  live.clear()
}

/** Spawns one child with its input. */
export const spawnStoreChild = (input: Record<string, unknown>): StoreChild => {
  const env = { ...process.env }
  delete env['NODE_OPTIONS']
  const child = spawn(process.execPath, [CHILD, JSON.stringify(input)], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  live.add(child)
  const messages: Array<Record<string, unknown>> = []
  const waiters: Array<() => void> = []
  let stdout = ''
  let stderr = ''
  let ended = false
  const exited = new Promise<void>((done) =>
    child.once('exit', () => {
      ended = true
      live.delete(child)
      for (const wake of waiters.splice(0)) wake()
      done()
    }),
  )
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
    let newline = stdout.indexOf('\n')
    while (newline >= 0) {
      messages.push(JSON.parse(stdout.slice(0, newline)) as Record<string, unknown>)
      stdout = stdout.slice(newline + 1)
      newline = stdout.indexOf('\n')
    }
    for (const wake of waiters.splice(0)) wake()
  })
  const waitFor: StoreChild['waitFor'] = (accept) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`child gave no such message: ${stderr}`)), READY_TIMEOUT_MS)
      const check = () => {
        const found = messages.find(accept)
        if (found !== undefined) {
          clearTimeout(timer)
          resolve(found)
        } else if (ended) {
          clearTimeout(timer)
          reject(new Error(`child exited first (${child.exitCode}, ${child.signalCode}): ${stderr}`))
        } else waiters.push(check)
      }
      check()
    })
  return {
    pid: child.pid ?? -1,
    messages,
    waitFor,
    exited,
    kill: async () => {
      if (!ended) child.kill('SIGKILL')
      await exited
    },
  }
}
