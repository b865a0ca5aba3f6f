/**
 * `pnpm bench:latency`: how fast the product reacts, measured on the built packages. These are the
 * speed figures the test suites used to assert as wall-clock bounds (a test on a loaded machine
 * cannot tell slow from broken, so the tests now check only what happened, and the speed lives here):
 *
 *   shell background return   shell tool, `background: true`: call → result (the command still runs)
 *   shell timeout kill        shell tool, `sleep 30` with timeoutMs 200: call → timed-out result
 *   shell cancel              shell tool, `sleep 30` aborted after 100 ms: abort → cancelled result
 *   scripted delay overshoot  scripted model, `delayMs: 120`: time waited beyond 120 ms
 *   scripted abort            scripted model, an hour's delay aborted: abort → `aborted` error
 *   openai http 500           OpenAI-compatible client against a local server answering 500: call → error
 *   openai stall timeout      the same client, timeoutMs 300, a server that never answers: time beyond 300 ms
 *   start-time skew           |startedAt recorded at spawn − the kernel's start time| (host-inspector),
 *                             the margin the 2 s start-time tolerance must cover
 *
 *   node bench/src/latency.mjs [--runs R]    (default 5; prints best, median and worst per figure)
 *
 * A report: exit code 0 whatever the numbers.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { processStartTime } from '@maka/host-inspector'
import { makeOpenAICompatibleProvider, makeScriptedProvider } from '@maka/providers'
import { makeShellTool } from '@maka/tools'

const parseRuns = (argv) => {
  if (argv.length === 0) return 5
  const n = Number(argv[1])
  if (argv[0] !== '--runs' || argv.length !== 2 || !Number.isSafeInteger(n) || n < 1) {
    throw new Error('usage: latency.mjs [--runs R]')
  }
  return n
}

const runs = parseRuns(process.argv.slice(2))
const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'maka-bench-latency-')))
const started = []

const context = (signal) => ({
  sessionId: 'bench-session',
  runId: 'bench-run',
  cwd: workspace,
  toolCallId: 'call-1',
  shellRuns: { record: async () => undefined },
  processIdentity: { identify: async () => null },
  ...(signal === undefined ? {} : { signal }),
})

const request = (signal) => ({
  systemPrompt: 'bench',
  messages: [{ role: 'user', text: 'hi' }],
  tools: [],
  ...(signal === undefined ? {} : { signal }),
})

const drain = async (provider, req) => {
  for await (const _ of provider.stream(req));
}

const failureOf = async (promise) => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a failure')
}

const shell = makeShellTool()

const figures = {
  'shell background return': async () => {
    const t0 = performance.now()
    const outcome = await shell.run({ command: 'sleep 30', background: true }, context())
    const ms = performance.now() - t0
    started.push(outcome.result.pid)
    return ms
  },
  'shell timeout kill': async () => {
    const t0 = performance.now()
    const outcome = await shell.run({ command: 'sleep 30', timeoutMs: 200 }, context())
    if (outcome.result.timedOut !== true) throw new Error('the command did not time out')
    return performance.now() - t0
  },
  'shell cancel': async () => {
    const controller = new AbortController()
    let abortedAt = 0
    setTimeout(() => {
      abortedAt = performance.now()
      controller.abort()
    }, 100)
    const outcome = await shell.run({ command: 'sleep 30' }, context(controller.signal))
    if (outcome.result.cancelled !== true) throw new Error('the command was not cancelled')
    return performance.now() - abortedAt
  },
  'scripted delay overshoot': async () => {
    const provider = makeScriptedProvider({ steps: [{ delayMs: 120 }, { text: 'late' }], toolCallIdPrefix: 'b' })
    const t0 = performance.now()
    await drain(provider, request())
    return performance.now() - t0 - 120
  },
  'scripted abort': async () => {
    const controller = new AbortController()
    const provider = makeScriptedProvider({ steps: [{ delayMs: 3_600_000 }], toolCallIdPrefix: 'b' })
    const pending = failureOf(drain(provider, request(controller.signal)))
    await new Promise((resolve) => setTimeout(resolve, 20))
    const t0 = performance.now()
    controller.abort()
    const error = await pending
    if (error.code !== 'aborted') throw new Error(`expected aborted, got ${error.code}`)
    return performance.now() - t0
  },
  'openai http 500': async () => {
    const server = await listen((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end('{"error":{"message":"nope"}}')
    })
    try {
      const provider = makeOpenAICompatibleProvider({ baseUrl: server.baseUrl, model: 'm', timeoutMs: 3_600_000 })
      const t0 = performance.now()
      const error = await failureOf(drain(provider, request()))
      if (error.code !== 'http_error') throw new Error(`expected http_error, got ${error.code}`)
      return performance.now() - t0
    } finally {
      await server.close()
    }
  },
  'openai stall timeout': async () => {
    const server = await listen(() => undefined)
    try {
      const provider = makeOpenAICompatibleProvider({ baseUrl: server.baseUrl, model: 'm', timeoutMs: 300 })
      const t0 = performance.now()
      const error = await failureOf(drain(provider, request()))
      if (error.code !== 'timeout') throw new Error(`expected timeout, got ${error.code}`)
      return performance.now() - t0 - 300
    } finally {
      await server.close()
    }
  },
  'start-time skew': async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore', detached: true })
    await new Promise((resolve, reject) => {
      child.once('spawn', resolve)
      child.once('error', reject)
    })
    const recordedAt = Date.now()
    started.push(child.pid)
    const kernel = await processStartTime(child.pid)
    if (kernel === null) throw new Error('no start time')
    return Math.abs(recordedAt - kernel.getTime())
  },
}

function listen(handler) {
  const sockets = new Set()
  const server = createServer(handler)
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
        close: () =>
          new Promise((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          }),
      })
    })
  })
}

const ms = (n) => `${n.toFixed(1)} ms`

try {
  const rows = [['figure', 'best', 'median', 'worst']]
  for (const [name, measure] of Object.entries(figures)) {
    const samples = []
    for (let i = 0; i < runs; i += 1) samples.push(await measure())
    samples.sort((a, b) => a - b)
    rows.push([name, ms(samples[0]), ms(samples[Math.floor(samples.length / 2)]), ms(samples[samples.length - 1])])
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  console.log(`\n## Latency (${runs} runs each)\n`)
  for (const row of rows)
    console.log(
      row
        .map((cell, c) => cell.padEnd(widths[c]))
        .join('  ')
        .trimEnd(),
    )
} finally {
  for (const pid of started) {
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  rmSync(workspace, { recursive: true, force: true })
}
