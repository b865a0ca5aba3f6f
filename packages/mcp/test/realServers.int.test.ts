/**
 * openMcpTools against the two servers from npm (started from their installed entry points, stdio
 * and Streamable HTTP on loopback) and the toy server of the fixtures for the failures real servers
 * do not show on demand: every server tool becomes a tool with the mode its annotations give, a
 * call's result is its content as text, and a server that dies, hangs, or writes garbage gives an
 * error result with one sentence and no stack.
 */
import { spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { afterAll, describe, expect, it } from 'vitest'
import { type McpServerConfig, type McpTools, openMcpTools, parseMcpConfigFile } from '../src/index.js'
import {
  EVERYTHING_SERVER,
  FILESYSTEM_SERVER,
  TOY_SERVER,
  contextFor,
  isAlive,
  removeScratch,
  scratchDir,
  toyPidOf,
  waitFor,
} from './support.js'

const opened: Array<McpTools> = []
const children: Array<ReturnType<typeof spawn>> = []
afterAll(async () => {
  await Promise.all(opened.map((m) => m.close()))
  for (const child of children) child.kill('SIGKILL')
  await removeScratch()
})

const serversOf = (
  mcpServers: Record<string, unknown>,
  env: Record<string, string> = {},
): ReadonlyArray<McpServerConfig> => {
  const parsed = parseMcpConfigFile('/test/.mcp.json', JSON.stringify({ mcpServers }), env)
  if (E.isLeft(parsed)) throw new Error(parsed.left.message)
  return parsed.right
}

const open = async (
  mcpServers: Record<string, unknown>,
  options: { cwd: string; callTimeoutMs?: number; env?: Record<string, string> },
) => {
  const tools = await openMcpTools(
    { servers: serversOf(mcpServers, options.env), files: [] },
    { cwd: options.cwd, ...(options.callTimeoutMs === undefined ? {} : { callTimeoutMs: options.callTimeoutMs }) },
  )
  opened.push(tools)
  return tools
}

const toolOf = (tools: McpTools, name: string) => {
  const tool = tools.tools.find((t) => t.name === name)
  if (tool === undefined) throw new Error(`no tool ${name}`)
  return tool
}

const node = process.execPath

describe('openMcpTools', () => {
  describe('when the server is @modelcontextprotocol/server-filesystem', () => {
    it('gives each tool the mode its annotations give', async () => {
      const dir = await scratchDir()
      const mcp = await open({ fs: { command: node, args: [FILESYSTEM_SERVER, dir] } }, { cwd: dir })
      expect(mcp.servers[0]?.state).toBe('connected')
      expect(Object.fromEntries(mcp.servers[0]?.tools.map((t) => [t.toolName, t.recoveryMode]) ?? [])).toEqual({
        mcp__fs__read_file: 'replay_safe',
        mcp__fs__read_text_file: 'replay_safe',
        mcp__fs__read_media_file: 'replay_safe',
        mcp__fs__read_multiple_files: 'replay_safe',
        mcp__fs__write_file: 'idempotent',
        mcp__fs__edit_file: 'never_auto_retry',
        mcp__fs__create_directory: 'idempotent',
        mcp__fs__list_directory: 'replay_safe',
        mcp__fs__list_directory_with_sizes: 'replay_safe',
        mcp__fs__directory_tree: 'replay_safe',
        mcp__fs__move_file: 'never_auto_retry',
        mcp__fs__search_files: 'replay_safe',
        mcp__fs__get_file_info: 'replay_safe',
        mcp__fs__list_allowed_directories: 'replay_safe',
      })
      const read = toolOf(mcp, 'mcp__fs__read_text_file')
      expect({ mutates: read.mutates, recovery: read.recovery, server: read.source?.server }).toEqual({
        mutates: false,
        recovery: 'replay_safe',
        server: 'fs',
      })
      expect(read.source?.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect(read.parameters).toMatchObject({ type: 'object', properties: { path: { type: 'string' } } })
    })

    it('reads and writes, and carries isError', async () => {
      const dir = await scratchDir()
      await writeFile(join(dir, 'a.txt'), 'first line\n')
      const mcp = await open({ fs: { command: node, args: [FILESYSTEM_SERVER, dir] } }, { cwd: dir })
      const context = contextFor(dir)
      expect(await toolOf(mcp, 'mcp__fs__read_text_file').run({ path: join(dir, 'a.txt') }, context)).toEqual({
        result: 'first line\n',
        isError: false,
      })
      const wrote = await toolOf(mcp, 'mcp__fs__write_file').run({ path: join(dir, 'b.txt'), content: 'new' }, context)
      expect(wrote.isError).toBe(false)
      expect(await readFile(join(dir, 'b.txt'), 'utf8')).toBe('new')
      const refused = await toolOf(mcp, 'mcp__fs__read_text_file').run({ path: '/etc/hostname' }, context)
      expect(refused.isError).toBe(true)
      expect(refused.result).toMatch(/outside allowed directories/)
    })

    it('lowers a tool the entry distrusts, and ignores an entry that would raise one', async () => {
      const dir = await scratchDir()
      const mcp = await open(
        {
          fs: {
            command: node,
            args: [FILESYSTEM_SERVER, dir],
            recovery: { read_text_file: 'never_auto_retry', edit_file: 'replay_safe' },
          },
        },
        { cwd: dir },
      )
      const modes = Object.fromEntries(mcp.servers[0]?.tools.map((t) => [t.serverToolName, t]) ?? [])
      expect(modes['read_text_file']).toMatchObject({ recoveryMode: 'never_auto_retry', mutates: false })
      expect(modes['edit_file']).toMatchObject({ recoveryMode: 'never_auto_retry' })
      expect(modes['edit_file']?.why).toContain('ignored')
    })
  })

  describe('when the server is @modelcontextprotocol/server-everything', () => {
    it('lists its tools with their modes and answers calls, structured content as JSON', async () => {
      const dir = await scratchDir()
      const mcp = await open({ everything: { command: node, args: [EVERYTHING_SERVER, 'stdio'] } }, { cwd: dir })
      const modes = Object.fromEntries(mcp.servers[0]?.tools.map((t) => [t.serverToolName, t.recoveryMode]) ?? [])
      expect(modes).toMatchObject({
        echo: 'replay_safe',
        'get-sum': 'replay_safe',
        'toggle-simulated-logging': 'never_auto_retry',
      })
      expect(await toolOf(mcp, 'mcp__everything__echo').run({ message: 'hi' }, contextFor(dir))).toEqual({
        result: 'Echo: hi',
        isError: false,
      })
      const sum = await toolOf(mcp, 'mcp__everything__get-sum').run({ a: 2, b: 3 }, contextFor(dir))
      expect(sum).toMatchObject({ isError: false })
      expect(String(sum.result)).toContain('5')
    })

    it('never lets a secret of the entry reach a result', async () => {
      const dir = await scratchDir()
      const mcp = await open(
        { everything: { command: node, args: [EVERYTHING_SERVER, 'stdio'], env: { API_TOKEN: '${TEST_TOKEN}' } } },
        { cwd: dir, env: { TEST_TOKEN: 'tok-7f3a9c-SECRET' } },
      )
      const env = await toolOf(mcp, 'mcp__everything__get-env').run({}, contextFor(dir))
      expect(env.result).toContain('API_TOKEN')
      expect(env.result).toContain('[redacted]')
      expect(env.result).not.toContain('tok-7f3a9c-SECRET')
    })

    it('speaks Streamable HTTP to it on loopback, with the entry headers', async () => {
      const dir = await scratchDir()
      const port = await new Promise<number>((done) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const address = probe.address()
          probe.close(() => done(typeof address === 'object' && address !== null ? address.port : 0))
        })
      })
      const child = spawn(node, [EVERYTHING_SERVER, 'streamableHttp'], {
        env: { ...process.env, PORT: String(port) },
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      children.push(child)
      let stderr = ''
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      await waitFor('the HTTP server to listen', () => stderr.includes('listening'))
      const mcp = await open(
        { web: { type: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: { 'X-Test': 'yes' } } },
        { cwd: dir },
      )
      expect(mcp.servers[0]).toMatchObject({ state: 'connected', transport: 'http' })
      expect(await toolOf(mcp, 'mcp__web__echo').run({ message: 'over http' }, contextFor(dir))).toEqual({
        result: 'Echo: over http',
        isError: false,
      })
    })
  })

  describe('when a server does not start', () => {
    it.each([
      {
        name: 'its command does not exist',
        entry: { command: 'maka-no-such-command' },
        reason: /could not be started \(ENOENT\)/,
      },
      {
        name: 'it exits at once',
        entry: { command: node, args: ['-e', 'process.exit(4)'] },
        reason: /closed the connection/,
      },
      {
        name: 'it prints garbage',
        entry: { command: node, args: [TOY_SERVER, '--garbage-at-start'] },
        reason: /not MCP|closed the connection/,
      },
      {
        name: 'nothing listens at its URL',
        entry: { type: 'http', url: 'http://127.0.0.1:9/mcp' },
        reason: /URL did not answer/,
      },
    ])('is failed with a reason when $name, and has no tools', async ({ entry, reason }) => {
      const dir = await scratchDir()
      const mcp = await open({ s: entry, fs: { command: node, args: [FILESYSTEM_SERVER, dir] } }, { cwd: dir })
      const failed = mcp.servers.find((s) => s.name === 's')
      expect(failed?.state).toBe('failed')
      expect(failed?.reason).toMatch(reason)
      expect(mcp.tools.some((t) => t.name.startsWith('mcp__s__'))).toBe(false)
      expect(mcp.servers.find((s) => s.name === 'fs')?.state).toBe('connected')
    })
  })

  describe('when a call goes wrong', () => {
    const noStack = (result: unknown) => {
      expect(String(result)).not.toMatch(/\n\s+at /)
    }

    it('gives an error result when the server dies mid-call, and for every later call', async () => {
      const dir = await scratchDir()
      const mcp = await open({ toy: { command: node, args: [TOY_SERVER] } }, { cwd: dir })
      const died = await toolOf(mcp, 'mcp__toy__crash').run({}, contextFor(dir))
      expect(died).toEqual({
        result: 'The MCP server "toy" stopped during the call; the call has no result.',
        isError: true,
      })
      const after = await toolOf(mcp, 'mcp__toy__lookup').run({ key: 'k' }, contextFor(dir))
      expect(after.isError).toBe(true)
      expect(after.result).toMatch(/not running/)
    })

    it('gives an error result past the time limit and sends MCP cancellation', async () => {
      const dir = await scratchDir()
      const log = join(dir, 'toy.log')
      const mcp = await open(
        { toy: { command: node, args: [TOY_SERVER, '--log', log] } },
        { cwd: dir, callTimeoutMs: 300 },
      )
      const hung = await toolOf(mcp, 'mcp__toy__hang').run({}, contextFor(dir))
      expect(hung).toEqual({
        result: 'The MCP server "toy" did not answer within 300 ms; the call was cancelled.',
        isError: true,
      })
      await waitFor('the cancellation', async () => (await readFile(log, 'utf8')).includes('hang cancelled'))
      // The server still serves the next call.
      expect(await toolOf(mcp, 'mcp__toy__lookup').run({ key: 'k' }, contextFor(dir))).toEqual({
        result: 'value of k',
        isError: false,
      })
    })

    it('sends MCP cancellation when the call is aborted', async () => {
      const dir = await scratchDir()
      const log = join(dir, 'toy.log')
      const mcp = await open({ toy: { command: node, args: [TOY_SERVER, '--log', log] } }, { cwd: dir })
      const abort = new AbortController()
      const pending = toolOf(mcp, 'mcp__toy__hang').run({}, contextFor(dir, { signal: abort.signal }))
      await waitFor('the call to arrive', async () =>
        (await readFile(log, 'utf8').catch(() => '')).includes('hang called'),
      )
      abort.abort()
      expect(await pending).toEqual({ result: 'The call to MCP server "toy" was cancelled.', isError: true })
      await waitFor('the cancellation', async () => (await readFile(log, 'utf8')).includes('hang cancelled'))
    })

    it('gives an error result when the server writes garbage on stdout', async () => {
      const dir = await scratchDir()
      const mcp = await open({ toy: { command: node, args: [TOY_SERVER] } }, { cwd: dir })
      const garbled = await toolOf(mcp, 'mcp__toy__garbage').run({}, contextFor(dir))
      expect(garbled.isError).toBe(true)
      expect(garbled.result).toMatch(/not MCP on its stdout/)
      noStack(garbled.result)
    })

    it('refuses arguments that are not an object without calling the server', async () => {
      const dir = await scratchDir()
      const mcp = await open({ toy: { command: node, args: [TOY_SERVER] } }, { cwd: dir })
      expect(await toolOf(mcp, 'mcp__toy__lookup').run(['k'], contextFor(dir))).toEqual({
        result: 'mcp__toy__lookup: the arguments must be a JSON object.',
        isError: true,
      })
    })

    it('gives the server protocol error as an error result', async () => {
      const dir = await scratchDir()
      const mcp = await open({ toy: { command: node, args: [TOY_SERVER] } }, { cwd: dir })
      const bad = await toolOf(mcp, 'mcp__toy__lookup').run({ key: 42 }, contextFor(dir))
      expect(bad.isError).toBe(true)
      noStack(bad.result)
    })
  })

  describe('when a tool is idempotent', () => {
    it("passes the operation's idempotency key in _meta, and none to a tool of another mode", async () => {
      const dir = await scratchDir()
      const mcp = await open({ toy: { command: node, args: [TOY_SERVER] } }, { cwd: dir })
      const entry = mcp.servers[0]?.tools.find((t) => t.serverToolName === 'echo_meta')
      expect(entry?.recoveryMode).toBe('idempotent')
      const keyed = await toolOf(mcp, 'mcp__toy__echo_meta').run(
        { value: 'v' },
        contextFor(dir, { idempotencyKey: 'maka:run-1-o2' }),
      )
      expect(JSON.parse(String(keyed.result))).toEqual({ value: 'v', meta: { 'maka/idempotencyKey': 'maka:run-1-o2' } })
      const lowered = await open(
        { toy: { command: node, args: [TOY_SERVER], recovery: { echo_meta: 'never_auto_retry' } } },
        { cwd: dir },
      )
      const unkeyed = await toolOf(lowered, 'mcp__toy__echo_meta').run(
        { value: 'v' },
        contextFor(dir, { idempotencyKey: 'maka:run-1-o2' }),
      )
      expect(JSON.parse(String(unkeyed.result))).toEqual({ value: 'v', meta: null })
    })
  })

  describe('when the command ends', () => {
    it('stops every stdio server', async () => {
      const dir = await scratchDir()
      const log = join(dir, 'toy.log')
      const mcp = await openMcpTools(
        { servers: serversOf({ toy: { command: node, args: [TOY_SERVER, '--log', log] } }), files: [] },
        { cwd: dir },
      )
      const pid = toyPidOf(await readFile(log, 'utf8'))
      expect(isAlive(pid)).toBe(true)
      await mcp.close()
      await waitFor('the server to be gone', () => !isAlive(pid))
    })
  })

  describe('when a server name has characters a tool name cannot have', () => {
    it('puts "_" in their place in the tool name and keeps the server name in the source', async () => {
      const dir = await scratchDir()
      const mcp = await open({ 'toy.local': { command: node, args: [TOY_SERVER] } }, { cwd: dir })
      const lookup = toolOf(mcp, 'mcp__toy_local__lookup')
      expect(lookup.source?.server).toBe('toy.local')
      expect(await lookup.run({ key: 'k' }, contextFor(dir))).toEqual({ result: 'value of k', isError: false })
    })
  })

  describe('when the variant of a server changes a schema', () => {
    it('gives the tool another digest, and an unchanged tool the same one', async () => {
      const dir = await scratchDir()
      const a = await open({ toy: { command: node, args: [TOY_SERVER, '--variant', 'a'] } }, { cwd: dir })
      const b = await open({ toy: { command: node, args: [TOY_SERVER, '--variant', 'b'] } }, { cwd: dir })
      const digest = (m: McpTools, name: string) => m.tools.find((t) => t.name === name)?.source?.digest
      expect(digest(a, 'mcp__toy__lookup')).not.toBe(digest(b, 'mcp__toy__lookup'))
      expect(digest(a, 'mcp__toy__remember')).toBe(digest(b, 'mcp__toy__remember'))
    })
  })
})
