/**
 * The interactive hosts keep a session's setup too (issue 24 item 1): a session whose turn ran an
 * openai-compatible model on a loopback endpoint with `--yes` gets its next message — from `maka ui`
 * (over its HTTP API, no browser needed) and from `maka chat --session` (in tmux) — answered by the
 * same model at the same endpoint, with the same permission mode, and each host says so.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { afterAll, afterEach, describe, expect, it, onTestFinished } from 'vitest'
import { type EndpointDouble, startEndpointDouble } from './endpointDouble.js'
import { CLI, cliEnv, removeScratch, runCli, runHeaders, scratch, tmuxChat, waitFor } from './support.js'

const doubles: Array<EndpointDouble> = []
const children: Array<ChildProcessWithoutNullStreams> = []
const chat = tmuxChat('setup', { columns: 160, rows: 40 })
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
  await Promise.all(doubles.splice(0).map((d) => d.close()))
})
afterAll(removeScratch)

/** A session `s1` whose one turn used `fake-1` at the double with `--yes`; the double answers `answers` more. */
const givenEndpointSession = async () => {
  const double = await startEndpointDouble([{ text: 'first' }])
  doubles.push(double)
  const env = await scratch()
  const first = await runCli(
    [
      'run',
      '--data-dir',
      env.dataDir,
      '--session',
      's1',
      '--cwd',
      env.workspace,
      '--provider',
      'openai-compatible',
      '--base-url',
      double.baseUrl,
      '--model',
      'fake-1',
      '--yes',
      'hello',
    ],
    { env: { MAKA_API_KEY: 'test' } },
  )
  expect(first.code, first.stderr).toBe(0)
  return { double, env }
}

describe('a host that opens a session keeps its setup', () => {
  describe('when maka ui sends a new message in the session', () => {
    it('the endpoint answers it with the recorded model, the mode is kept, and the host says so', async () => {
      const { double, env } = await givenEndpointSession()
      const server = spawn(process.execPath, [CLI, 'ui', '--data-dir', env.dataDir, '--no-open'], {
        env: { ...cliEnv(true), MAKA_API_KEY: 'test' },
        stdio: ['pipe', 'pipe', 'pipe'],
      })
      children.push(server)
      let out = ''
      server.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
      const url = new URL(
        await waitFor(
          'maka ui to listen',
          () => /Open (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(out)?.[1],
          60_000,
        ),
      )
      await waitFor('the startup pass', () => out.includes('startup recovery'), 60_000)
      const sent = await fetch(`${url.origin}/api/invoke/sessions:send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-maka-token': url.searchParams.get('token') ?? '' },
        body: JSON.stringify({ args: ['s1', 'again'] }),
      })
      expect(sent.status).toBe(200)
      await waitFor('the second request', () => double.requests.length >= 2, 60_000)
      expect(double.requests.map((r) => r['model'])).toEqual(['fake-1', 'fake-1'])
      await waitFor('two completed runs', async () => {
        const headers = await runHeaders(env.dataDir, 's1')
        return headers.length === 2 && headers.every((h) => h['status'] === 'completed')
      })
      const headers = await runHeaders(env.dataDir, 's1')
      expect(headers.map((h) => h['permissionMode'])).toEqual(['allow', 'allow'])
      expect(out).toContain(
        `maka ui: session s1: using openai-compatible model fake-1 at ${double.baseUrl} (recorded in session s1) · permission mode allow (recorded in session s1)`,
      )
    })
  })

  describe('when maka chat --session opens the session and the user sends a message', () => {
    it('the endpoint answers it with the recorded model, and the chat says which model and mode it uses', async () => {
      const { double, env } = await givenEndpointSession()
      await chat.open(['--data-dir', env.dataDir, '--session', 's1'], true, ['MAKA_API_KEY=test'])
      onTestFinished(chat.close)
      chat.type('again')
      await waitFor('the second request', () => double.requests.length >= 2, 60_000)
      expect(double.requests.map((r) => r['model'])).toEqual(['fake-1', 'fake-1'])
      expect(chat.screen()).toContain(
        `maka: using openai-compatible model fake-1 at ${double.baseUrl} (recorded in session s1) · permission mode allow (recorded in session s1)`,
      )
      await waitFor('the answer', () => chat.screen().includes('ok'))
    })
  })
})
