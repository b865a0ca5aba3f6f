/**
 * The built `maka` against a real OpenAI-compatible endpoint on loopback: failure classes read from
 * the ledger, multi-turn memory and resume-with-the-source's-model read from what the endpoint got.
 */
import { execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { type Answer, ECHOED_BODY, type EndpointDouble, startEndpointDouble } from './endpointDouble.js'
import { CLI, type CliResult, cliEnv, ledgerRows, removeScratch, runHeaders, scratch, waitFor } from './support.js'

const doubles: Array<EndpointDouble> = []
afterEach(async () => {
  await Promise.all(doubles.splice(0).map((d) => d.close()))
})
afterAll(removeScratch)

const endpoint = async (...answers: ReadonlyArray<Answer>) => {
  const double = await startEndpointDouble(answers)
  doubles.push(double)
  return double
}

/** Runs the built CLI with the resume flag on and `MAKA_API_KEY=test` unless told otherwise. */
const maka = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}): Promise<CliResult> =>
  new Promise((done) => {
    const full: NodeJS.ProcessEnv = { ...cliEnv(true), MAKA_API_KEY: 'test', ...env }
    for (const [key, value] of Object.entries(full)) if (value === undefined) delete full[key]
    execFile(process.execPath, [CLI, ...args], { env: full, timeout: 60_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr })
    })
  })

const openai = (double: { readonly baseUrl: string }) => [
  '--provider',
  'openai-compatible',
  '--base-url',
  double.baseUrl,
  '--model',
  'm',
]

const onlyRun = async (dataDir: string, sessionId: string) => {
  const [header, ...more] = await runHeaders(dataDir, sessionId)
  expect(more).toEqual([])
  if (header === undefined) throw new Error('no run')
  return { header, rows: await ledgerRows(dataDir, sessionId, String(header['runId'])) }
}

// A run's stderr without the one line that says which model and mode it uses (decision 186).
const failureLines = (stderr: string): ReadonlyArray<string> =>
  stderr.split('\n').filter((line) => line !== '' && !line.startsWith('maka: using '))

type Message = { readonly role: string; readonly content?: unknown; readonly tool_calls?: unknown }
const messagesOf = (request: Record<string, unknown> | undefined): ReadonlyArray<Message> =>
  (request?.['messages'] as ReadonlyArray<Message> | undefined) ?? []

describe('maka with an openai-compatible endpoint', () => {
  describe('when the endpoint streams text', () => {
    it('completes, and the header records the provider, model and base URL but never the key', async () => {
      const double = await endpoint({ text: 'Hello there.' })
      const { dataDir, workspace } = await scratch()
      const result = await maka(
        ['run', '--data-dir', dataDir, '--session', 's', '--cwd', workspace, ...openai(double), 'hi'],
        { MAKA_API_KEY: 'sk-never-recorded' },
      )
      expect(result.code, result.stderr).toBe(0)
      const { header, rows } = await onlyRun(dataDir, 's')
      expect(header).toMatchObject({
        status: 'completed',
        providerId: 'openai-compatible',
        modelId: 'm',
        providerBaseUrl: double.baseUrl,
      })
      expect(rows.some((r) => JSON.stringify(r['content']).includes('Hello there.'))).toBe(true)
      for (const entry of await readdir(dataDir, { recursive: true, withFileTypes: true })) {
        if (entry.isFile()) {
          expect(await readFile(join(entry.parentPath, entry.name), 'utf8')).not.toContain('sk-never-recorded')
        }
      }
    })
  })

  describe('when the endpoint calls a tool, streamed or as plain JSON', () => {
    it.each<[string, Answer]>([
      ['streamed in fragments', { toolCall: { id: 'call-s', name: 'list_dir', args: '{"path":"."}' } }],
      ['as one JSON chat completion', { json: { toolCall: { name: 'list_dir', args: '{"path":"."}' } } }],
    ])('runs the tool when it is %s, and sends its result back', async (_how, call) => {
      const double = await endpoint(call, { text: 'One file.' })
      const { dataDir, workspace } = await scratch()
      const result = await maka([
        'run',
        '--data-dir',
        dataDir,
        '--session',
        't',
        '--cwd',
        workspace,
        ...openai(double),
        'ls',
      ])
      expect(result.code, result.stderr).toBe(0)
      const { rows } = await onlyRun(dataDir, 't')
      const kinds = rows.map((r) => (r['content'] as { kind?: string } | undefined)?.kind ?? null)
      // With the flag on, the turn writes the tool journal: the dispatch row has no content.
      expect(kinds).toEqual(['text', 'function_call', null, 'function_response', 'text', null])
      expect(messagesOf(double.requests[1]).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool'])
    })
  })

  describe('when the provider fails', () => {
    const closedPort = async (): Promise<string> => {
      const double = await startEndpointDouble([])
      await double.close()
      return double.baseUrl
    }

    it.each<[string, string, () => Promise<string>, Record<string, unknown>, ReadonlyArray<string>]>([
      [
        'HTTP 500',
        'provider_http_error',
        async () => (await endpoint({ status: 500 })).baseUrl,
        { httpStatus: 500 },
        [],
      ],
      [
        'HTTP 401',
        'provider_auth_error',
        async () => (await endpoint({ status: 401 })).baseUrl,
        { httpStatus: 401 },
        [],
      ],
      ['a refused connection', 'provider_unreachable', closedPort, {}, []],
      [
        'a connection dropped mid-stream',
        'provider_connection_lost',
        async () => (await endpoint({ drop: true })).baseUrl,
        {},
        [],
      ],
      [
        'a stalled stream',
        'provider_timeout',
        async () => (await endpoint({ stall: true })).baseUrl,
        {},
        ['--timeout', '300'],
      ],
      [
        'tool-call arguments that are not JSON',
        'provider_protocol_error',
        async () => (await endpoint({ toolCall: { id: 'c', name: 'list_dir', args: '{"path": ' } })).baseUrl,
        {},
        [],
      ],
    ])(
      'records %s as %s in the terminal event and says so on stderr',
      async (_what, failureClass, url, detail, extra) => {
        const baseUrl = await url()
        const { dataDir, workspace } = await scratch()
        // One try: what a failure is recorded as, before any retry (see 'when a failure may pass on a later try').
        const result = await maka(
          [
            'run',
            '--data-dir',
            dataDir,
            '--session',
            'f',
            '--cwd',
            workspace,
            ...openai({ baseUrl }),
            ...extra,
            'hello',
          ],
          { MAKA_PROVIDER_MAX_ATTEMPTS: '1' },
        )
        expect(result.code, result.stderr).toBe(1)
        const { header, rows } = await onlyRun(dataDir, 'f')
        const terminal = rows[rows.length - 1]
        expect(terminal).toMatchObject({
          status: 'failed',
          content: { kind: 'error', code: failureClass },
          actions: { endInvocation: true, stateDelta: { failureClass, ...detail } },
        })
        expect(header).toMatchObject({ status: 'failed', failureClass })
        expect(result.stdout).toContain(`failed (${failureClass})`)
        expect(result.stderr).toMatch(/^maka: The (model|connection) .+\.$/m)
        // No body (it may echo the prompt) in the ledger or on the terminal.
        expect(JSON.stringify(rows)).not.toContain(ECHOED_BODY)
        expect(result.stderr + result.stdout).not.toContain(ECHOED_BODY)
      },
    )
  })

  describe('when a failure may pass on a later try', () => {
    // Short waits, so a test spends milliseconds between tries rather than seconds.
    const quick = { MAKA_PROVIDER_RETRY_BASE_MS: '10' }
    const run = (double: EndpointDouble, session: string, dirs: { dataDir: string; workspace: string }, env = {}) =>
      maka(
        ['run', '--data-dir', dirs.dataDir, '--session', session, '--cwd', dirs.workspace, ...openai(double), 'hello'],
        { ...quick, ...env },
      )
    const modelTexts = (rows: ReadonlyArray<Record<string, unknown>>) =>
      rows.flatMap((r) => {
        const content = r['content'] as { kind?: string; text?: string } | undefined
        return r['role'] === 'model' && content?.kind === 'text' ? [content.text] : []
      })

    it('waits out a 429 with Retry-After, says so on stderr, and sends the same request again', async () => {
      const double = await endpoint({ status: 429, retryAfter: '1' }, { text: 'Hello there.' })
      const dirs = await scratch()
      const result = await run(double, 'r429', dirs)
      expect(result.code, result.stderr).toBe(0)
      expect(failureLines(result.stderr)).toEqual([
        'maka: The model endpoint is limiting the rate of requests (HTTP 429). Trying again in 1 s (try 2 of 5).',
      ])
      expect(double.requests).toHaveLength(2)
      expect(double.requests[1]).toEqual(double.requests[0])
      expect(messagesOf(double.requests[1]).filter((m) => m.role === 'user')).toHaveLength(1)
      const { rows } = await onlyRun(dirs.dataDir, 'r429')
      expect(modelTexts(rows)).toEqual(['Hello there.'])
    })

    it('gives up on 500 after the last try, naming the status and the next step, and maka resume then continues', async () => {
      const double = await endpoint({ status: 500 }, { status: 500 }, { status: 500 }, { text: 'Back again.' })
      const dirs = await scratch()
      const result = await run(double, 'r500', dirs, { MAKA_PROVIDER_MAX_ATTEMPTS: '3' })
      expect(result.code, result.stderr).toBe(1)
      const lines = failureLines(result.stderr)
      expect(lines.slice(0, 2)).toEqual([
        expect.stringMatching(/^maka: The model endpoint answered HTTP 500\. Trying again in .+ \(try 2 of 3\)\.$/),
        expect.stringMatching(/^maka: The model endpoint answered HTTP 500\. Trying again in .+ \(try 3 of 3\)\.$/),
      ])
      expect(lines.at(-1)).toBe(
        'maka: The model endpoint answered HTTP 500. Gave up after 3 tries. Run `maka resume --session r500` to try again later.',
      )
      expect(double.requests).toHaveLength(3)
      const { rows } = await onlyRun(dirs.dataDir, 'r500')
      expect(rows.at(-1)).toMatchObject({
        content: { kind: 'error', code: 'provider_http_error' },
        actions: { stateDelta: { httpStatus: 500, providerAttempts: 3 } },
      })
      expect(result.stderr + result.stdout + JSON.stringify(rows)).not.toContain(ECHOED_BODY)

      const resumed = await maka(['resume', '--data-dir', dirs.dataDir, '--session', 'r500'], quick)
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(messagesOf(double.requests[3]).map((m) => m.role)).toEqual(['system', 'user'])
    })

    it('tells a 429 that outlasts the tries apart from a 500', async () => {
      const double = await endpoint({ status: 429 }, { status: 429 })
      const dirs = await scratch()
      const result = await run(double, 'r429x', dirs, { MAKA_PROVIDER_MAX_ATTEMPTS: '2' })
      expect(result.code, result.stderr).toBe(1)
      expect(
        result.stderr
          .split('\n')
          .filter((l) => l !== '')
          .at(-1),
      ).toBe(
        'maka: The model endpoint is limiting the rate of requests (HTTP 429). Gave up after 2 tries. Run `maka resume --session r429x` to try again later.',
      )
    })

    it.each<[string, Answer, Record<string, string>]>([
      ['a stalled stream', { stall: true }, { MAKA_PROVIDER_TIMEOUT_MS: '300' }],
      ['a stream dropped mid-answer', { drop: true }, {}],
    ])('tries again after %s and commits only the whole answer', async (_what, failing, env) => {
      const double = await endpoint(failing, { text: 'Whole answer.' })
      const dirs = await scratch()
      const result = await run(double, 's', dirs, env)
      expect(result.code, result.stderr).toBe(0)
      expect(result.stderr).toMatch(/Trying again in .+ \(try 2 of 5\)\.$/m)
      expect(double.requests).toHaveLength(2)
      expect(double.requests[1]).toEqual(double.requests[0])
      const { rows } = await onlyRun(dirs.dataDir, 's')
      expect(modelTexts(rows)).toEqual(['Whole answer.'])
    })

    it('never runs a tool again: after a dropped stream only the failed step is sent again, unchanged', async () => {
      const double = await endpoint(
        { toolCall: { id: 'call-t', name: 'list_dir', args: '{"path":"."}' } },
        { drop: true },
        { text: 'One file.' },
      )
      const dirs = await scratch()
      const result = await run(double, 't', dirs)
      expect(result.code, result.stderr).toBe(0)
      expect(double.requests).toHaveLength(3)
      expect(double.requests[2]).toEqual(double.requests[1])
      expect(messagesOf(double.requests[2]).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool'])
      const { rows } = await onlyRun(dirs.dataDir, 't')
      const kinds = rows.map((r) => (r['content'] as { kind?: string } | undefined)?.kind)
      expect(kinds.filter((k) => k === 'function_call')).toHaveLength(1)
      expect(kinds.filter((k) => k === 'function_response')).toHaveLength(1)
    })
  })

  describe('when the stream holds a chunk that is not JSON', () => {
    it('fails with one stderr line of its own: the client library prints nothing, whatever OPENAI_LOG says', async () => {
      const double = await endpoint({ malformed: true })
      const dirs = await scratch()
      const result = await maka(
        ['run', '--data-dir', dirs.dataDir, '--session', 'm', '--cwd', dirs.workspace, ...openai(double), 'hello'],
        { OPENAI_LOG: 'debug' },
      )
      expect(result.code, result.stderr).toBe(1)
      expect(failureLines(result.stderr)).toEqual(['maka: The model endpoint sent a chunk that is not valid JSON.'])
      expect(result.stdout).not.toContain(ECHOED_BODY)
      expect(double.requests).toHaveLength(1)
    })
  })

  describe('when the timeout comes from MAKA_PROVIDER_TIMEOUT_MS', () => {
    it('ends a stalled stream as provider_timeout', async () => {
      const double = await endpoint({ stall: true })
      const { dataDir, workspace } = await scratch()
      const result = await maka(
        ['run', '--data-dir', dataDir, '--session', 'e', '--cwd', workspace, ...openai(double), 'hello'],
        { MAKA_PROVIDER_TIMEOUT_MS: '300', MAKA_PROVIDER_MAX_ATTEMPTS: '1' },
      )
      expect(result.code, result.stderr).toBe(1)
      const { header } = await onlyRun(dataDir, 'e')
      expect(header).toMatchObject({ status: 'failed', failureClass: 'provider_timeout' })
    })
  })

  describe('when the provider flags are bad input', () => {
    it.each<[string, ReadonlyArray<string>, Record<string, string | undefined>]>([
      ['an invalid --base-url', ['--base-url', 'not a url'], {}],
      ['a non-http --base-url', ['--base-url', 'ftp://127.0.0.1/v1'], {}],
      ['credentials in --base-url', ['--base-url', 'http://user:pw@127.0.0.1/v1'], {}],
      ['an invalid --timeout', ['--base-url', 'http://127.0.0.1:9/v1', '--timeout', '-5'], {}],
      [
        'an invalid MAKA_PROVIDER_TIMEOUT_MS',
        ['--base-url', 'http://127.0.0.1:9/v1'],
        { MAKA_PROVIDER_TIMEOUT_MS: 'soon' },
      ],
      ['no MAKA_API_KEY', ['--base-url', 'http://127.0.0.1:9/v1'], { MAKA_API_KEY: undefined }],
    ])('exits 2 on %s and writes nothing', async (_what, flags, env) => {
      const { dataDir, workspace } = await scratch()
      const result = await maka(
        [
          'run',
          '--data-dir',
          dataDir,
          '--cwd',
          workspace,
          '--provider',
          'openai-compatible',
          '--model',
          'm',
          ...flags,
          'hi',
        ],
        env,
      )
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(/^maka: .+/)
      expect(existsSync(dataDir)).toBe(false)
    })
  })

  describe('when a second turn runs in the session', () => {
    it('sends the first turn’s user and model messages before the new prompt', async () => {
      const double = await endpoint({ text: 'Hello Ada.' }, { text: 'You are Ada.' })
      const { dataDir, workspace } = await scratch()
      const turn = (prompt: string) =>
        maka(['run', '--data-dir', dataDir, '--session', 'memo', '--cwd', workspace, ...openai(double), prompt])
      expect((await turn('my name is Ada')).code).toBe(0)
      expect((await turn('what is my name?')).code).toBe(0)
      expect(messagesOf(double.requests[1]).slice(1)).toEqual([
        { role: 'user', content: 'my name is Ada' },
        { role: 'assistant', content: 'Hello Ada.' },
        { role: 'user', content: 'what is my name?' },
      ])
    })
  })

  describe('when a new turn follows one that was killed (issue 24, parks with a next step)', () => {
    // Starts a turn and SIGKILLs it once `ready` holds; resolves after the kill.
    const killWhen = async (args: ReadonlyArray<string>, ready: () => Promise<boolean>) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { ...cliEnv(true), MAKA_API_KEY: 'test' },
        stdio: ['ignore', 'ignore', 'ignore'],
      })
      const closed = new Promise<void>((done) => child.on('close', () => done()))
      try {
        await waitFor('the moment to kill', ready, 30_000)
      } finally {
        child.kill('SIGKILL')
      }
      await closed
    }
    const onlyRunId = async (dataDir: string, session: string) =>
      String((await runHeaders(dataDir, session))[0]?.['runId'] ?? '')

    it('tells the model the earlier turn was interrupted, never sending two user messages in a row', async () => {
      const double = await endpoint({ stall: true }, { text: 'Yes, here.' })
      const { dataDir, workspace } = await scratch()
      const run = ['run', '--data-dir', dataDir, '--session', 'k', '--cwd', workspace, ...openai(double)]
      await killWhen([...run, 'hello'], () => Promise.resolve(double.requests.length >= 1))
      expect((await maka([...run, 'are you there?'])).code).toBe(0)
      expect(messagesOf(double.requests[1]).slice(1)).toEqual([
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: '(This turn was interrupted before an answer.)' },
        { role: 'user', content: 'are you there?' },
      ])
    })

    it('sends the call that was open at the kill, with a response that says its outcome is unknown', async () => {
      const double = await endpoint(
        { toolCall: { id: 'call-k', name: 'shell', args: '{"command":"sleep 20"}' } },
        { text: 'I will check first.' },
      )
      const { dataDir, workspace } = await scratch()
      const run = ['run', '--data-dir', dataDir, '--session', 'k', '--cwd', workspace, '--yes', ...openai(double)]
      await killWhen([...run, 'build it'], async () => {
        const runId = await onlyRunId(dataDir, 'k').catch(() => '')
        if (runId === '') return false
        const rows = await ledgerRows(dataDir, 'k', runId).catch(() => [])
        return rows.some((row) => (row['content'] as { kind?: string } | undefined)?.kind === 'function_call')
      })
      expect((await maka([...run, 'did it build?'])).code).toBe(0)
      const sent = messagesOf(double.requests[1]).slice(1)
      expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user'])
      expect(sent[1]?.tool_calls).toMatchObject([{ id: 'call-k', function: { name: 'shell' } }])
      expect(String(sent[2]?.content)).toContain('whether it ran, and what it did, is unknown')
    })
  })

  describe('when an interrupted openai-compatible run is resumed without provider flags', () => {
    // A run that committed a tool result and then hung on the model is killed with SIGKILL.
    const killedRun = async (double: EndpointDouble, dataDir: string, workspace: string) => {
      await new Promise<void>((done, fail) => {
        const child = spawn(
          process.execPath,
          [CLI, 'run', '--data-dir', dataDir, '--session', 'r', '--cwd', workspace, ...openai(double), 'list files'],
          { env: { ...cliEnv(true), MAKA_API_KEY: 'test' }, stdio: ['ignore', 'pipe', 'pipe'] },
        )
        let out = ''
        const timer = setTimeout(() => {
          child.kill('SIGKILL')
          fail(new Error(`the run never committed its tool result: ${out}`))
        }, 30_000)
        child.stdout.setEncoding('utf8')
        child.stdout.on('data', (chunk: string) => {
          out += chunk
          if (out.includes('function_response')) {
            // Wait until the next model call reached the double, so the kill lands while it hangs.
            void waitFor('the second request', () => double.requests.length >= 2, 30_000).then(
              () => child.kill('SIGKILL'),
              fail,
            )
          }
        })
        child.on('close', (_code, signal) => {
          clearTimeout(timer)
          if (signal === 'SIGKILL') done()
          else fail(new Error(`the run ended by itself: ${out}`))
        })
      })
    }

    it('fails with exit 2 before the claim when the key is missing, then resumes on the same model', async () => {
      const double = await endpoint(
        { toolCall: { id: 'call-r', name: 'list_dir', args: '{"path":"."}' } },
        { stall: true },
      )
      const { dataDir, workspace } = await scratch()
      await killedRun(double, dataDir, workspace)
      const runsBefore = await readdir(join(dataDir, 'sessions', 'r', 'runs'))

      const refused = await maka(['resume', '--data-dir', dataDir, '--session', 'r'], { MAKA_API_KEY: undefined })
      expect(refused.code, refused.stdout).toBe(2)
      expect(refused.stderr).toMatch(/openai-compatible model m .*MAKA_API_KEY/)
      expect(await readdir(join(dataDir, 'sessions', 'r', 'runs'))).toEqual(runsBefore)
      expect(
        existsSync(join(dataDir, 'sessions', 'r', 'claims'))
          ? await readdir(join(dataDir, 'sessions', 'r', 'claims'))
          : [],
      ).toEqual([])
      expect(existsSync(join(dataDir, 'sessions', 'r', 'owner.lock'))).toBe(false)
      expect(double.requests).toHaveLength(2)

      const resumed = await maka(['resume', '--data-dir', dataDir, '--session', 'r'])
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.stderr).not.toContain('instead of')
      const third = double.requests[2]
      expect(third?.['model']).toBe('m')
      expect(messagesOf(third).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool'])
      const continuation = (await runHeaders(dataDir, 'r')).find((h) => h['continuationSource'] !== undefined)
      expect(continuation).toMatchObject({
        status: 'completed',
        providerId: 'openai-compatible',
        modelId: 'm',
        providerBaseUrl: double.baseUrl,
      })
    })

    it('uses a model given by flag instead, with one line saying so', async () => {
      const double = await endpoint(
        { toolCall: { id: 'call-o', name: 'list_dir', args: '{"path":"."}' } },
        { stall: true },
      )
      const { dataDir, workspace } = await scratch()
      await killedRun(double, dataDir, workspace)
      const resumed = await maka(['resume', '--data-dir', dataDir, '--session', 'r', '--model', 'other'])
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.stderr.split('\n').filter((line) => line.includes('instead of'))).toEqual([
        `maka: Resuming with openai-compatible model other at ${double.baseUrl} from the flags instead of the recorded openai-compatible model m at ${double.baseUrl}.`,
      ])
      expect(double.requests[2]?.['model']).toBe('other')
    })
  })
})
