/**
 * `maka doctor` (issue 24 item 1): each check with its fix — the settings file, the safe-resume flag,
 * the model of a new session and its key, its endpoint by one small request to a loopback server, the
 * data dir and the store — exit 1 when one fails, and never a key in what it prints.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { hashTree, json, removeScratch, runCli, scratch } from './support.js'

afterAll(removeScratch)

interface Check {
  readonly name: string
  readonly status: string
  readonly detail: string
  readonly fix?: string
}

const KEY = 'sk-doctor-GOOD-7f3a'

/** A loopback server that lists models for the right key only, and counts what it was asked. */
const modelServer = async () => {
  const asked: Array<string> = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    asked.push(`${req.method ?? '?'} ${req.url ?? '?'}`)
    const ok = req.headers.authorization === `Bearer ${KEY}`
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
    res.end(JSON.stringify(ok ? { data: [{ id: 'fake-1' }] } : { error: { message: 'bad key' } }))
  })
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    asked,
    close: () => new Promise<void>((done) => server.close(() => done())),
  }
}

const checksOf = (stdout: string): Record<string, Check> =>
  Object.fromEntries((JSON.parse(stdout) as { checks: ReadonlyArray<Check> }).checks.map((c) => [c.name, c]))

describe('maka doctor', () => {
  describe('when nothing is set up yet', () => {
    it('passes with the defaults, warns that safe resume is off and says how to turn it on', async () => {
      const env = await scratch()
      const result = await runCli(['doctor', '--json', '--data-dir', env.dataDir])
      expect(result.code, result.stderr).toBe(0)
      const checks = checksOf(result.stdout)
      expect(checks['settings']).toMatchObject({ status: 'ok', detail: expect.stringContaining('not written yet') })
      expect(checks['safe resume']).toMatchObject({ status: 'warn', fix: 'maka config set safeResume true' })
      expect(checks['model']).toMatchObject({ status: 'ok', detail: expect.stringContaining('the scripted model') })
      expect(checks['data dir']).toMatchObject({
        status: 'ok',
        detail: expect.stringContaining('created by the first run'),
      })
      expect(checks['store']).toMatchObject({ status: 'ok', detail: expect.stringContaining('0 sessions') })
      expect(await hashTree(env.dataDir)).toBe('absent')
    })
  })

  describe('when the default profile names a loopback endpoint', () => {
    it('asks it once for its models: a wrong key fails with its fix, the right one passes, no key printed', async () => {
      const server = await modelServer()
      try {
        const env = await scratch()
        const data = ['--data-dir', env.dataDir]
        for (const [key, value] of [
          ['safeResume', 'true'],
          ['profiles.local.provider', 'openai-compatible'],
          ['profiles.local.baseUrl', server.baseUrl],
          ['profiles.local.model', 'fake-1'],
          ['profiles.local.apiKeyEnv', 'LOCAL_API_KEY'],
          ['profile', 'local'],
        ] as const)
          expect((await runCli(['config', 'set', key, value, ...data])).code).toBe(0)

        const unset = await runCli(['doctor', '--json', ...data])
        expect(unset.code).toBe(1)
        expect(checksOf(unset.stdout)['model']).toMatchObject({
          status: 'fail',
          detail: expect.stringContaining('LOCAL_API_KEY, which is not set'),
        })
        expect(server.asked).toEqual([])

        const wrong = await runCli(['doctor', ...data], { env: { LOCAL_API_KEY: 'sk-wrong-0000' } })
        expect(wrong.code).toBe(1)
        expect(wrong.stdout).toMatch(/^FAIL {2}endpoint {5}.* refused the key \(HTTP 401\)$/m)
        expect(wrong.stdout).toMatch(/fix: check the key/)
        expect(wrong.stdout + wrong.stderr).not.toContain('sk-wrong-0000')

        const right = await runCli(['doctor', '--json', ...data], { env: { LOCAL_API_KEY: KEY } })
        expect(right.code, right.stdout).toBe(0)
        expect(checksOf(right.stdout)['endpoint']).toMatchObject({ status: 'ok' })
        expect(right.stdout + right.stderr).not.toContain(KEY)
        expect(server.asked).toEqual(['GET /v1/models', 'GET /v1/models'])
      } finally {
        await server.close()
      }
    })
  })

  describe('when the endpoint cannot be reached', () => {
    it('fails the endpoint check with the fix', async () => {
      const server = await modelServer()
      await server.close()
      const env = await scratch()
      const result = await runCli(
        [
          'doctor',
          '--json',
          '--data-dir',
          env.dataDir,
          '--provider',
          'openai-compatible',
          '--base-url',
          server.baseUrl,
          '--model',
          'm',
        ],
        { env: { MAKA_API_KEY: 'x' } },
      )
      expect(result.code).toBe(1)
      expect(checksOf(result.stdout)['endpoint']).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('cannot be reached'),
        fix: expect.stringContaining('start the server'),
      })
    })
  })

  describe('when the settings file is bad', () => {
    it('fails the settings check naming the file, and reports the rest', async () => {
      const env = await scratch()
      await mkdir(env.dataDir)
      await writeFile(join(env.dataDir, 'config.toml'), 'safeResume = "often"\n')
      const result = await runCli(['doctor', '--json', '--data-dir', env.dataDir])
      expect(result.code).toBe(1)
      const checks = checksOf(result.stdout)
      expect(checks['settings']).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining(join(env.dataDir, 'config.toml')),
      })
      expect(checks['store']).toMatchObject({ status: 'ok' })
      expect(json(result)).toMatchObject({ ok: false })
    })
  })
})
