/**
 * The rules of `sessionSetup.ts` and `userConfig.ts` as tables: which permission mode wins, and what
 * a settings file may hold.
 */
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { BadInputError } from '../src/ExitCode.js'
import { resolvePermission } from '../src/sessionSetup.js'
import { type LoadedConfig, decodeUserConfig, safeResumeSetting } from '../src/userConfig.js'

const settings = (permissionMode?: 'ask' | 'allow' | 'deny'): LoadedConfig => ({
  file: '/h/config.toml',
  exists: true,
  config: { profiles: {}, ...(permissionMode === undefined ? {} : { permissionMode }) },
})

describe('resolvePermission', () => {
  describe('when flags, the recorded run and the settings disagree', () => {
    it.each([
      ['--yes wins', { yes: true }, 'deny', 'deny', false, 'allow', '--yes'],
      ['--permission-mode wins', { permissionMode: 'deny' }, 'allow', 'allow', false, 'deny', '--permission-mode'],
      ['the recorded mode over the settings', {}, 'allow', 'deny', false, 'allow', 'recorded in session s'],
      [
        'a recorded ask is deny where nobody can ask',
        {},
        'ask',
        undefined,
        false,
        'deny',
        'recorded in session s asks; this command cannot ask',
      ],
      ['a recorded ask stays where one can ask', {}, 'ask', undefined, true, 'ask', 'recorded in session s'],
      ['the settings when nothing is recorded', {}, undefined, 'allow', false, 'allow', 'settings /h/config.toml'],
      ['deny by default headless', {}, undefined, undefined, false, 'deny', 'default'],
      ['ask by default where one can ask', {}, undefined, undefined, true, 'ask', 'default'],
    ] as const)('%s', (_name, flags, recorded, configured, canAsk, mode, from) => {
      expect(
        resolvePermission({
          flags,
          settings: settings(configured),
          recorded: { ...(recorded === undefined ? {} : { permissionMode: recorded }), label: 'recorded in session s' },
          canAsk,
        }),
      ).toEqual({ mode, from })
    })
  })

  describe('when the flags cannot be honoured', () => {
    it.each([
      ['--yes with another mode', { yes: true, permissionMode: 'deny' as const }, true],
      ['ask where nobody can ask', { permissionMode: 'ask' as const }, false],
    ])('%s is bad input', (_name, flags, canAsk) => {
      expect(() => resolvePermission({ flags, settings: settings(), recorded: null, canAsk })).toThrow(BadInputError)
    })
  })
})

describe('decodeUserConfig', () => {
  it.each([
    ['an empty file', {}, true],
    [
      'every key',
      { safeResume: true, permissionMode: 'ask', profile: 'p', profiles: { p: { provider: 'scripted' } } },
      true,
    ],
    ['an unknown key', { colour: 'blue' }, false],
    ['a key in a profile', { profiles: { p: { apiKey: 'sk-1' } } }, false],
    ['a default profile without its table', { profile: 'p' }, false],
    ['a base URL with credentials', { profiles: { p: { baseUrl: 'http://u:p@h/v1' } } }, false],
  ])('%s', (_name, raw, ok) => {
    expect(E.isRight(decodeUserConfig(raw))).toBe(ok)
  })
})

describe('safeResumeSetting', () => {
  it.each([
    ['the variable on', { MAKA_RUNTIME_SAFE_BOUNDARY_RESUME: '1' }, false, true],
    ['the variable off wins over the file', { MAKA_RUNTIME_SAFE_BOUNDARY_RESUME: '0' }, true, false],
    ['an empty variable leaves it to the file', { MAKA_RUNTIME_SAFE_BOUNDARY_RESUME: '' }, true, true],
    ['neither', {}, false, false],
  ])('%s', (_name, env, inFile, on) => {
    expect(safeResumeSetting({ profiles: {}, safeResume: inFile }, env)).toBe(on)
  })
})
