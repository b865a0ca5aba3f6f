/**
 * `maka config` and the settings file of the data home (issue 24 item 1): `config set/get/list`, a
 * bad file or a bad key refused (exit 2, naming the file and the key, nothing written), the order
 * flags > environment > settings > defaults, and the one-line hint `run` prints while safe resume is
 * off. Every command runs the built CLI with plain `node`.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { hashTree, json, removeScratch, runCli, scratch } from './support.js'

afterAll(removeScratch)

const HINT = /^maka: safe resume is off, .*maka config set safeResume true.*MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1/m

describe('maka config', () => {
  describe('when keys are set, read and listed', () => {
    it('writes config.toml in the data home and reads back every key', async () => {
      const env = await scratch()
      const data = ['--data-dir', env.dataDir]
      for (const [key, value] of [
        ['safeResume', 'true'],
        ['permissionMode', 'allow'],
        ['profiles.local.provider', 'openai-compatible'],
        ['profiles.local.baseUrl', 'http://127.0.0.1:9/v1'],
        ['profiles.local.model', 'fake-1'],
        ['profiles.local.apiKeyEnv', 'LOCAL_API_KEY'],
        ['profile', 'local'],
      ] as const) {
        const set = await runCli(['config', 'set', key, value, ...data])
        expect(set.code, set.stderr).toBe(0)
      }
      const file = join(env.dataDir, 'config.toml')
      const text = await readFile(file, 'utf8')
      expect(text).toContain('[profiles.local]')
      expect(text).toContain('apiKeyEnv = "LOCAL_API_KEY"')
      const got = await runCli(['config', 'get', 'profiles.local.model', ...data])
      expect(got).toMatchObject({ code: 0, stdout: 'fake-1\n' })
      const listed = await runCli(['config', 'list', '--json', ...data])
      expect(json(listed)).toEqual({
        file,
        exists: true,
        settings: {
          profile: 'local',
          permissionMode: 'allow',
          safeResume: true,
          'profiles.local.provider': 'openai-compatible',
          'profiles.local.baseUrl': 'http://127.0.0.1:9/v1',
          'profiles.local.model': 'fake-1',
          'profiles.local.apiKeyEnv': 'LOCAL_API_KEY',
        },
      })
      const text2 = await runCli(['config', 'list', ...data])
      expect(text2.stdout).toContain(`# ${file}\n`)
      expect(text2.stdout).toContain('profiles.local.model = fake-1\n')
      // A key the file does not set: nothing printed, exit 1 (git config's convention).
      await runCli(['config', 'unset', 'permissionMode', ...data])
      expect(await runCli(['config', 'get', 'permissionMode', ...data])).toMatchObject({ code: 1, stdout: '' })
    })
  })

  describe('when a key or a value is bad', () => {
    it.each([
      ['an unknown key', ['set', 'colour', 'blue'], /Cannot set colour in .*config\.toml: unknown key "colour"/],
      ['a bad permission mode', ['set', 'permissionMode', 'maybe'], /permissionMode must be ask, allow or deny/],
      ['a bad flag value', ['set', 'safeResume', 'yes'], /safeResume must be true or false/],
      ['a key instead of a variable name', ['set', 'profiles.p.apiKeyEnv', 'sk-123 456'], /never the key itself/],
      ['a URL with credentials', ['set', 'profiles.p.baseUrl', 'http://u:p@h/v1'], /must not hold credentials/],
      ['a default profile that is not defined', ['set', 'profile', 'nope'], /no \[profiles\.nope\] table/],
      ['an unknown key read', ['get', 'colour'], /Cannot read colour from .*config\.toml: unknown key/],
    ])('%s: exit 2, one line naming the file and the key, nothing written', async (_name, args, message) => {
      const env = await scratch()
      await mkdir(env.dataDir)
      await writeFile(join(env.dataDir, 'config.toml'), 'safeResume = false\n')
      const before = await hashTree(env.dataDir)
      const result = await runCli(['config', ...args, '--data-dir', env.dataDir])
      expect(result.code).toBe(2)
      expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(message)])
      expect(await hashTree(env.dataDir)).toBe(before)
    })
  })

  describe('when the file itself is bad', () => {
    it.each([
      ['not TOML', 'safeResume = = true\n', /is not valid TOML/],
      ['an unknown key', 'safeResume = true\ncolour = "blue"\n', /is invalid: unknown key "colour"/],
      ['a value of the wrong kind', 'safeResume = "often"\n', /is invalid: safeResume must be true or false/],
      ['a key in a profile', '[profiles.a]\nkey = "sk-1"\n', /is invalid: unknown key "profiles\.a\.key"/],
    ])('%s: every command that reads it exits 2 naming the file, and writes nothing', async (_name, body, message) => {
      const env = await scratch()
      await mkdir(env.dataDir)
      const file = join(env.dataDir, 'config.toml')
      await writeFile(file, body)
      const before = await hashTree(env.dataDir)
      for (const args of [
        ['config', 'list'],
        ['config', 'set', 'safeResume', 'true'],
        ['run', '--cwd', env.workspace, 'hello'],
        ['resume'],
        ['resume', 'plan'],
      ]) {
        const result = await runCli([...args, '--data-dir', env.dataDir])
        expect(result.code, args.join(' ')).toBe(2)
        expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(message)])
        expect(result.stderr).toContain(file)
      }
      expect(await hashTree(env.dataDir)).toBe(before)
    })
  })
})

describe('the settings in force', () => {
  describe('when safeResume is set in the file', () => {
    it('turns safe resume on, and the environment still wins over it', async () => {
      const env = await scratch()
      const data = ['--data-dir', env.dataDir]
      expect((await runCli(['config', 'set', 'safeResume', 'true', ...data])).code).toBe(0)
      const on = await runCli(['resume', 'plan', '--json', ...data])
      expect(json(on)['rejectionReasons']).toEqual(['resume_candidate_missing'])
      const off = await runCli(['resume', 'plan', '--json', ...data], {
        env: { MAKA_RUNTIME_SAFE_BOUNDARY_RESUME: '0' },
      })
      expect(json(off)['rejectionReasons']).toEqual(['resume_feature_disabled'])
    })
  })

  describe('when safe resume is off', () => {
    it('run prints the hint once, and not when the settings turn it on', async () => {
      const env = await scratch()
      const data = ['--data-dir', env.dataDir]
      const off = await runCli(['run', '--cwd', env.workspace, 'hello', ...data])
      expect(off.code, off.stderr).toBe(0)
      expect(off.stderr.match(new RegExp(HINT.source, 'gm'))).toHaveLength(1)
      await runCli(['config', 'set', 'safeResume', 'true', ...data])
      const on = await runCli(['run', '--cwd', env.workspace, 'hello', ...data])
      expect(on.code, on.stderr).toBe(0)
      expect(on.stderr).not.toMatch(HINT)
    })
  })

  describe('when a default profile names an endpoint and the variable of its key', () => {
    it('a new session uses it; a flag wins over it; a missing key variable is exit 2 before any write', async () => {
      const env = await scratch()
      const data = ['--data-dir', env.dataDir]
      for (const [key, value] of [
        ['profiles.local.provider', 'openai-compatible'],
        ['profiles.local.baseUrl', 'http://127.0.0.1:9/v1'],
        ['profiles.local.model', 'fake-1'],
        ['profiles.local.apiKeyEnv', 'LOCAL_API_KEY'],
        ['profile', 'local'],
      ] as const)
        await runCli(['config', 'set', key, value, ...data])
      const before = await hashTree(env.dataDir)
      const missing = await runCli(['run', '--cwd', env.workspace, 'hello', ...data])
      expect(missing.code).toBe(2)
      expect(missing.stderr).toMatch(/^maka: The profile local reads its key from LOCAL_API_KEY, which is not set/m)
      expect(missing.stderr).not.toContain('sessions')
      expect(await hashTree(env.dataDir)).toBe(before)
      expect(existsSync(join(env.dataDir, 'sessions'))).toBe(false)
      // A flag wins over the settings: the scripted model runs.
      const flagged = await runCli(['run', '--cwd', env.workspace, '--provider', 'scripted', 'hello', ...data])
      expect(flagged.code, flagged.stderr).toBe(0)
      expect(flagged.stderr).toMatch(/^maka: using the scripted model \(flags\) · permission mode deny \(default\)$/m)
    })
  })
})
