import type { RecoveryMode } from '@maka/events'
import { describe, expect, it } from 'vitest'
import {
  builtinTools,
  makeShellTool,
  makeToolRegistry,
  recoveryModeOf,
  recoveryModesOf,
  ToolRegistrationError,
  ToolRegistrationRefusalSentences,
  type ReconcileProbe,
  type Tool,
} from '../src/index.js'

const probe: ReconcileProbe = {
  basis: () => Promise.resolve('b'),
  probe: () => Promise.resolve({ verdict: 'unreadable' }),
}

const givenTool = (name: string, overrides: Partial<Tool> = {}): Tool => ({
  name,
  description: `${name} tool`,
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  mutates: false,
  run: () => Promise.resolve({ result: name, isError: false }),
  ...overrides,
})

// A declaration a TypeScript host could not write, as a JavaScript host might.
const declaring = (recovery: unknown, overrides: Partial<Tool> = {}): Tool =>
  ({ ...givenTool('js'), ...overrides, recovery }) as Tool

const refusalOf = (tools: ReadonlyArray<Tool>): ToolRegistrationError | undefined => {
  try {
    makeToolRegistry(tools)
    return undefined
  } catch (error) {
    if (error instanceof ToolRegistrationError) return error
    throw error
  }
}

describe('recoveryModeOf', () => {
  describe('when a tool declares nothing', () => {
    it('is never_auto_retry', () => {
      expect(recoveryModeOf(givenTool('plain'), {})).toBe('never_auto_retry')
      expect(recoveryModeOf(givenTool('plain', { mutates: true }), {})).toBe('never_auto_retry')
    })
  })

  describe('when a tool declares a static mode its flags allow', () => {
    it.each<[RecoveryMode, Partial<Tool>]>([
      ['replay_safe', { mutates: false }],
      ['idempotent', { mutates: true }],
      ['reconcile', { mutates: true, reconcile: probe }],
      ['reattach', { mutates: true }],
      ['never_auto_retry', { mutates: true }],
    ])('is %s whatever the args', (mode, flags) => {
      const tool = givenTool('t', { ...flags, recovery: mode })
      expect(recoveryModeOf(tool, undefined)).toBe(mode)
      expect(recoveryModeOf(tool, { any: 'thing' })).toBe(mode)
    })
  })

  describe('when a declaration contradicts the tool', () => {
    it('counts replay_safe from a mutating tool as never_auto_retry, static or by args', () => {
      expect(recoveryModeOf(givenTool('m', { mutates: true, recovery: 'replay_safe' }), {})).toBe('never_auto_retry')
      expect(recoveryModeOf(givenTool('m', { mutates: true, recovery: () => 'replay_safe' }), {})).toBe(
        'never_auto_retry',
      )
    })

    it('counts a mutates flag that is not false as mutating', () => {
      expect(recoveryModeOf(declaring('replay_safe', { mutates: undefined as unknown as boolean }), {})).toBe(
        'never_auto_retry',
      )
    })

    it('counts reconcile from a tool without a probe as never_auto_retry', () => {
      expect(recoveryModeOf(givenTool('r', { mutates: true, recovery: () => 'reconcile' }), {})).toBe(
        'never_auto_retry',
      )
      const halfProbe = { basis: () => Promise.resolve('b') } as unknown as ReconcileProbe
      expect(recoveryModeOf(givenTool('r', { recovery: () => 'reconcile', reconcile: halfProbe }), {})).toBe(
        'never_auto_retry',
      )
    })
  })

  describe('when the mode is a function of the args', () => {
    const tool = givenTool('f', {
      mutates: true,
      recovery: (args) => ((args as { key?: string }).key === 'k' ? 'idempotent' : 'reattach'),
    })

    it('applies it to the call args', () => {
      expect(recoveryModeOf(tool, { key: 'k' })).toBe('idempotent')
      expect(recoveryModeOf(tool, { key: 'other' })).toBe('reattach')
    })

    it('is never_auto_retry when the function throws', () => {
      expect(recoveryModeOf(tool, null)).toBe('never_auto_retry')
    })

    it.each<[string, unknown]>([
      ['an unknown mode', 'outcome_unknown'],
      ['a promise', Promise.resolve('idempotent')],
      ['undefined', undefined],
      ['an inherited key', 'constructor'],
    ])('is never_auto_retry when it answers %s', (_, answer) => {
      expect(
        recoveryModeOf(
          declaring(() => answer, { mutates: true }),
          {},
        ),
      ).toBe('never_auto_retry')
    })
  })

  describe('when a static declaration is not a mode', () => {
    it('is never_auto_retry', () => {
      expect(recoveryModeOf(declaring('bogus'), {})).toBe('never_auto_retry')
      expect(recoveryModeOf(declaring(42), {})).toBe('never_auto_retry')
    })
  })

  describe('when asked about the built-in tools', () => {
    const tools = Object.fromEntries(builtinTools().map((tool) => [tool.name, tool]))

    it('reads files and folders as replay_safe and writes files as reconcile', () => {
      expect(recoveryModeOf(tools['read_file'] as Tool, { path: 'a' })).toBe('replay_safe')
      expect(recoveryModeOf(tools['list_dir'] as Tool, {})).toBe('replay_safe')
      expect(recoveryModeOf(tools['write_file'] as Tool, { path: 'a', content: 'b' })).toBe('reconcile')
    })

    it('reattaches a foreground shell command and never retries a background one or bad args', () => {
      const shell = makeShellTool()
      expect(recoveryModeOf(shell, { command: 'make' })).toBe('reattach')
      expect(recoveryModeOf(shell, { command: 'make', background: false, timeoutMs: 5 })).toBe('reattach')
      expect(recoveryModeOf(shell, { command: 'make', background: true })).toBe('never_auto_retry')
      expect(recoveryModeOf(shell, { command: '' })).toBe('never_auto_retry')
      expect(recoveryModeOf(shell, { command: 'make', background: 'yes' })).toBe('never_auto_retry')
      expect(recoveryModeOf(shell, { command: 'make', extra: 1 })).toBe('never_auto_retry')
      expect(recoveryModeOf(shell, null)).toBe('never_auto_retry')
    })
  })
})

describe('recoveryModesOf', () => {
  describe('when given the built-in tools', () => {
    it('names each tool’s static mode, by_args for shell, sorted by name', () => {
      const modes = recoveryModesOf(builtinTools())
      expect(Object.entries(modes)).toEqual([
        ['list_dir', 'replay_safe'],
        ['read_file', 'replay_safe'],
        ['shell', 'by_args'],
        ['write_file', 'reconcile'],
      ])
      expect(recoveryModesOf(makeToolRegistry(builtinTools()))).toEqual(modes)
    })
  })

  describe('when the tools come in any order, some twice', () => {
    const tools = [
      givenTool('zeta', { recovery: 'replay_safe' }),
      givenTool('Beta'),
      givenTool('alpha', { mutates: true, recovery: 'idempotent' }),
      givenTool('alpha', { mutates: true, recovery: () => 'idempotent' }),
    ]

    it('inserts the keys sorted by code unit, the later tool of a name winning', () => {
      const modes = recoveryModesOf(tools)
      expect(Object.keys(modes)).toEqual(['Beta', 'alpha', 'zeta'])
      expect(modes).toEqual({ Beta: 'never_auto_retry', alpha: 'by_args', zeta: 'replay_safe' })
      expect(JSON.stringify(modes)).toBe('{"Beta":"never_auto_retry","alpha":"by_args","zeta":"replay_safe"}')
      expect(recoveryModesOf(makeToolRegistry(tools))).toEqual(modes)
    })

    it('is frozen', () => {
      expect(Object.isFrozen(recoveryModesOf(tools))).toBe(true)
    })
  })

  describe('when a static declaration breaks the catalog’s rules', () => {
    it('gives the mode the rules leave (a list is not checked like a registry)', () => {
      expect(
        recoveryModesOf([
          givenTool('m', { mutates: true, recovery: 'replay_safe' }),
          givenTool('r', { mutates: true, recovery: 'reconcile' }),
          declaring('bogus'),
        ]),
      ).toEqual({ js: 'never_auto_retry', m: 'never_auto_retry', r: 'never_auto_retry' })
    })
  })

  describe('when a tool is named __proto__', () => {
    it('becomes a key like any other', () => {
      const modes = recoveryModesOf([givenTool('__proto__', { recovery: 'replay_safe' })])
      expect(Object.keys(modes)).toEqual(['__proto__'])
      expect(Object.getPrototypeOf(modes)).toBe(Object.prototype)
    })
  })
})

describe('makeToolRegistry refusals', () => {
  describe('when a mutating tool declares replay_safe', () => {
    it('throws ToolRegistrationError replay_safe_mutating_tool, naming the tool', () => {
      const refusal = refusalOf([givenTool('ok'), givenTool('writer', { mutates: true, recovery: 'replay_safe' })])
      expect(refusal).toBeInstanceOf(ToolRegistrationError)
      expect(refusal).toMatchObject({
        name: 'ToolRegistrationError',
        code: 'replay_safe_mutating_tool',
        toolName: 'writer',
        message: `Tool "writer" ${ToolRegistrationRefusalSentences.replay_safe_mutating_tool}.`,
      })
    })
  })

  describe('when a tool declares reconcile without a probe', () => {
    it('throws reconcile_without_probe, also for a probe missing one of its functions', () => {
      expect(refusalOf([givenTool('r', { mutates: true, recovery: 'reconcile' })])?.code).toBe(
        'reconcile_without_probe',
      )
      const halfProbe = { probe: () => Promise.resolve({ verdict: 'unreadable' }) } as unknown as ReconcileProbe
      expect(refusalOf([givenTool('r', { recovery: 'reconcile', reconcile: halfProbe })])?.code).toBe(
        'reconcile_without_probe',
      )
    })
  })

  describe('when a static declaration is not a mode', () => {
    it('throws unknown_recovery_mode', () => {
      expect(refusalOf([declaring('outcome_unknown')])?.code).toBe('unknown_recovery_mode')
      expect(refusalOf([declaring(null)])?.code).toBe('unknown_recovery_mode')
    })
  })

  describe('when the refused tool would have been replaced by a later one', () => {
    it('still throws: every registration is checked', () => {
      expect(refusalOf([givenTool('t', { mutates: true, recovery: 'replay_safe' }), givenTool('t')])?.code).toBe(
        'replay_safe_mutating_tool',
      )
    })
  })

  describe('when declarations are consistent, or depend on the args', () => {
    it('registers them', () => {
      expect(
        refusalOf([
          ...builtinTools(),
          givenTool('a', { mutates: true, recovery: () => 'replay_safe' }),
          givenTool('b', { mutates: true, recovery: () => 'reconcile' }),
          givenTool('c', { mutates: true, recovery: 'reconcile', reconcile: probe }),
          givenTool('d', { mutates: true, recovery: 'idempotent' }),
          givenTool('e', { recovery: 'replay_safe' }),
          givenTool('f', { mutates: true }),
        ]),
      ).toBeUndefined()
    })
  })
})
