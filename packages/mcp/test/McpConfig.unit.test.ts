/**
 * Config files as users write them: the Claude Code shape, `${VAR}` expansion in args, env and
 * headers, and a typed error naming the file and the key for every bad value — never the value.
 */
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { expandVariables, isLoopbackUrl, mergeMcpConfigs, parseMcpConfigFile } from '../src/index.js'

const FILE = '/p/.mcp.json'
const parse = (value: unknown, env: Record<string, string | undefined> = {}) =>
  parseMcpConfigFile(FILE, typeof value === 'string' ? value : JSON.stringify(value), env)
const errorOf = (value: unknown, env: Record<string, string | undefined> = {}) => {
  const parsed = parse(value, env)
  if (E.isRight(parsed)) throw new Error('expected a refusal')
  return parsed.left
}

describe('parseMcpConfigFile', () => {
  describe('when the file is written as users write it', () => {
    it('reads stdio and http servers, expanding ${VAR} in args, env and headers', () => {
      const parsed = parse(
        {
          mcpServers: {
            fs: {
              command: 'npx',
              args: ['-y', 'server', '${ROOT}'],
              env: { TOKEN: '${TOKEN}', MODE: '${MODE:-fast}' },
            },
            web: { type: 'http', url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer ${KEY}' } },
          },
        },
        { ROOT: '/work', TOKEN: 't0ken-value', KEY: 'k3y-value' },
      )
      expect(parsed).toEqual(
        E.right([
          {
            transport: 'stdio',
            name: 'fs',
            file: FILE,
            recovery: {},
            command: 'npx',
            args: ['-y', 'server', '/work'],
            env: { TOKEN: 't0ken-value', MODE: 'fast' },
            secretValues: ['t0ken-value', 'fast', '/work'],
          },
          {
            transport: 'http',
            name: 'web',
            file: FILE,
            recovery: {},
            url: 'http://127.0.0.1:3001/mcp',
            headers: { Authorization: 'Bearer k3y-value' },
            secretValues: ['Bearer k3y-value'],
          },
        ]),
      )
    })

    it('reads a per-tool and a "*" recovery, and leaves a disabled server out', () => {
      const parsed = parse({
        mcpServers: {
          fs: { command: 'x', recovery: { write_file: 'never_auto_retry', '*': 'idempotent' } },
          off: { command: 'y', disabled: true },
        },
      })
      expect(
        E.map((servers: ReadonlyArray<{ name: string; recovery: unknown }>) =>
          servers.map((s) => [s.name, s.recovery]),
        )(parsed),
      ).toEqual(E.right([['fs', { write_file: 'never_auto_retry', '*': 'idempotent' }]]))
    })
  })

  describe('when a server name has dots, dashes or underscores', () => {
    it('keeps it as it is written', () => {
      const parsed = parse({ mcpServers: { 'github.com': { command: 'x' }, my_server__2: { command: 'y' } } })
      expect(E.map((servers: ReadonlyArray<{ name: string }>) => servers.map((s) => s.name))(parsed)).toEqual(
        E.right(['github.com', 'my_server__2']),
      )
    })

    it('refuses one longer than 64 characters', () => {
      expect(errorOf({ mcpServers: { ['s'.repeat(65)]: { command: 'x' } } }).code).toBe('mcp_config_invalid')
    })
  })

  describe('when a value is bad', () => {
    it.each([
      { value: 'not json', code: 'mcp_config_not_json', key: '' },
      { value: [], code: 'mcp_config_invalid', key: '' },
      { value: { servers: {} }, code: 'mcp_config_invalid', key: 'mcpServers' },
      { value: { mcpServers: { fs: { args: [] } } }, code: 'mcp_config_invalid', key: 'mcpServers.fs.command' },
      {
        value: { mcpServers: { fs: { command: 'x', args: 'a b' } } },
        code: 'mcp_config_invalid',
        key: 'mcpServers.fs.args',
      },
      {
        value: { mcpServers: { fs: { command: 'x', args: ['a', 3] } } },
        code: 'mcp_config_invalid',
        key: 'mcpServers.fs.args[1]',
      },
      {
        value: { mcpServers: { fs: { command: 'x', env: { A: 1 } } } },
        code: 'mcp_config_invalid',
        key: 'mcpServers.fs.env.A',
      },
      {
        value: { mcpServers: { fs: { command: 'x', colour: 'red' } } },
        code: 'mcp_config_invalid',
        key: 'mcpServers.fs.colour',
      },
      { value: { mcpServers: { 'a b': { command: 'x' } } }, code: 'mcp_config_invalid', key: 'mcpServers["a b"]' },
      {
        value: { mcpServers: { fs: { command: 'x', recovery: { w: 'reconcile' } } } },
        code: 'mcp_config_invalid',
        key: 'mcpServers.fs.recovery.w',
      },
      {
        value: { mcpServers: { fs: { type: 'sse', url: 'http://127.0.0.1/' } } },
        code: 'mcp_config_invalid',
        key: 'mcpServers.fs.type',
      },
      {
        value: { mcpServers: { web: { type: 'http', url: 'https://example.com/mcp' } } },
        code: 'mcp_config_invalid',
        key: 'mcpServers.web.url',
      },
      {
        value: { mcpServers: { fs: { command: 'x', env: { T: '${UNSET_VAR}' } } } },
        code: 'mcp_config_variable_unset',
        key: 'mcpServers.fs.env.T',
      },
    ])('refuses with $code at "$key"', ({ value, code, key }) => {
      const error = errorOf(value)
      expect({ code: error.code, key: error.key, file: error.file }).toEqual({ code, key, file: FILE })
      expect(error.message).toContain(FILE)
      if (key !== '') expect(error.message).toContain(key)
    })

    it('never quotes a value in its sentence', () => {
      const error = errorOf({ mcpServers: { fs: { command: 'x', env: { T: 'secret-${UNSET_VAR}' } } } })
      expect(error.message).not.toContain('secret')
      expect(error.message).toContain('${UNSET_VAR}')
    })
  })
})

describe('expandVariables', () => {
  it.each([
    { value: 'a-${X}-b', env: { X: '1' }, expected: E.right('a-1-b') },
    { value: '${X:-dflt}', env: {}, expected: E.right('dflt') },
    { value: '${X:-dflt}', env: { X: '' }, expected: E.right('dflt') },
    { value: '${X}', env: { X: '' }, expected: E.right('') },
    { value: '${X}', env: {}, expected: E.left('X') },
    { value: '$X and {X}', env: { X: '1' }, expected: E.right('$X and {X}') },
  ])('expands $value', ({ value, env, expected }) => {
    expect(expandVariables(value, env)).toEqual(expected)
  })
})

describe('isLoopbackUrl', () => {
  it.each([
    ['http://127.0.0.1:3001/mcp', true],
    ['http://localhost:1/mcp', true],
    ['http://[::1]:8080/', true],
    ['http://127.1.2.3/', true],
    ['http://10.0.0.1/', false],
    ['https://example.com/', false],
    ['ftp://127.0.0.1/', false],
    ['not a url', false],
  ])('%s → %s', (url, expected) => {
    expect(isLoopbackUrl(url)).toBe(expected)
  })
})

describe('mergeMcpConfigs', () => {
  it('lets a later file replace a server of the same name, sorted by name', () => {
    const server = (name: string, file: string) =>
      ({ transport: 'stdio', name, file, recovery: {}, command: 'x', args: [], env: {}, secretValues: [] }) as const
    const merged = mergeMcpConfigs([
      { file: 'user', servers: [server('fs', 'user'), server('b', 'user')] },
      { file: 'project', servers: [server('fs', 'project')] },
    ])
    expect(merged.servers.map((s) => [s.name, s.file])).toEqual([
      ['b', 'user'],
      ['fs', 'project'],
    ])
    expect(merged.files).toEqual(['user', 'project'])
  })
})
