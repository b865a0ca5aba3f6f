/**
 * `maka` with tools from MCP servers no one here wrote — `@modelcontextprotocol/server-filesystem`
 * and `@modelcontextprotocol/server-everything`, started from their installed entry points by the
 * config files a user writes — and, for what real servers do not do on demand, the toy server and
 * the hold proxy of `packages/mcp/test/fixtures`. A multi-turn session reads and writes through the
 * filesystem server; real SIGKILLs of the agent in the middle of a read (the resume reissues it), of
 * a write (it parks `tool_outcome_unknown`), and before a resume whose server changed or lost the
 * tool (it parks `tool_catalog_mismatch`, naming server and tool); a server that crashes, hangs or
 * writes garbage gives the turn an error result and the turn goes on; secrets never leave memory.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import {
  CLI,
  type CliResult,
  cliEnv,
  json,
  ledgerRows,
  removeScratch,
  resumeJson,
  runCli,
  runHeaders,
  scratch,
  scriptFile,
  waitFor,
} from './support.js'

const require = createRequire(import.meta.url)
const entryOf = (name: string): string => join(dirname(require.resolve(`${name}/package.json`)), 'dist', 'index.js')
const FILESYSTEM_SERVER = entryOf('@modelcontextprotocol/server-filesystem')
const EVERYTHING_SERVER = entryOf('@modelcontextprotocol/server-everything')
const FIXTURES = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../packages/mcp/test/fixtures')
const TOY_SERVER = join(FIXTURES, 'toyServer.mjs')
const HOLD_PROXY = join(FIXTURES, 'holdProxy.mjs')
const node = process.execPath

afterAll(removeScratch)

/** Writes the project's `.mcp.json` in the workspace, as a user would. */
const projectConfig = (workspace: string, mcpServers: Record<string, unknown>) =>
  writeFile(join(workspace, '.mcp.json'), JSON.stringify({ mcpServers }, null, 2))

/** The filesystem server over the workspace (".": it starts in the session folder). */
const filesystemEntry = { command: 'node', args: [FILESYSTEM_SERVER, '.'] }

/** Every row of every run of a session, oldest run first. */
const sessionRows = async (dataDir: string, sessionId: string) => {
  const headers = [...(await runHeaders(dataDir, sessionId))].sort((a, b) =>
    String(a['createdAt']) < String(b['createdAt']) ? -1 : 1,
  )
  const rows = await Promise.all(headers.map((h) => ledgerRows(dataDir, sessionId, String(h['runId']))))
  return rows.flat()
}

interface Row {
  readonly content?: {
    readonly kind?: string
    readonly name?: string
    readonly result?: unknown
    readonly isError?: boolean
  }
  readonly actions?: { readonly toolOutcome?: { readonly settlementOrigin?: string } }
}
const responsesOf = (rows: ReadonlyArray<Row>, tool: string) =>
  rows.filter((r) => r.content?.kind === 'function_response' && r.content.name === tool)

/** Every file under `dir`, as one string (to prove a value never reached it). */
const everythingUnder = async (dir: string): Promise<string> => {
  let all = ''
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) all += await readFile(join(entry.parentPath, entry.name), 'utf8')
  }
  return all
}

/**
 * Starts `maka run` (resume flag on) and SIGKILLs it once `ready()` holds: a crash of the agent
 * at a moment the test chose.
 */
const killRunWhen = async (args: ReadonlyArray<string>, cwd: string, ready: () => boolean | Promise<boolean>) => {
  const child = spawn(node, [CLI, 'run', ...args], { cwd, env: cliEnv(true), stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const closed = new Promise<NodeJS.Signals | null>((done) => child.on('close', (_code, signal) => done(signal)))
  try {
    await waitFor('the moment to kill the agent', async () => child.exitCode === null && (await ready()), 60_000)
  } catch (error) {
    child.kill('SIGKILL')
    throw new Error(`${String(error)}: ${out}`)
  }
  child.kill('SIGKILL')
  expect(await closed).toBe('SIGKILL')
}

const noStackTrace = (result: CliResult) => {
  expect(result.stdout).not.toMatch(/\n\s+at .+:\d+:\d+/)
  expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/)
}

describe('maka with MCP servers', () => {
  describe('when a session reads and writes through the filesystem server', () => {
    it('runs two turns whose calls reach the server, with their results in the ledger', async () => {
      const { root, dataDir, workspace } = await scratch()
      await writeFile(join(workspace, 'notes.txt'), 'alpha\n')
      await projectConfig(workspace, { fs: filesystemEntry })
      const first = await scriptFile(root, 'first.json', [
        { toolCall: { name: 'mcp__fs__read_text_file', args: { path: 'notes.txt' } } },
        { toolCall: { name: 'mcp__fs__write_file', args: { path: 'summary.txt', content: 'alpha, summarised\n' } } },
        { text: 'Wrote the summary.' },
      ])
      const second = await scriptFile(root, 'second.json', [
        {
          toolCall: {
            name: 'mcp__fs__edit_file',
            args: { path: 'summary.txt', edits: [{ oldText: 'summarised', newText: 'reviewed' }] },
          },
        },
        { toolCall: { name: 'mcp__fs__read_text_file', args: { path: 'summary.txt' } } },
        { text: 'Reviewed.' },
      ])
      const args = ['--data-dir', dataDir, '--session', 'mcp-multi', '--yes']
      const one = await runCli(['run', ...args, '--script', first, 'summarise notes.txt'], {
        cwd: workspace,
        flag: true,
      })
      expect(one.code).toBe(0)
      const two = await runCli(['run', ...args, '--script', second, 'review it'], { cwd: workspace, flag: true })
      expect(two.code).toBe(0)
      expect(await readFile(join(workspace, 'summary.txt'), 'utf8')).toBe('alpha, reviewed\n')
      const rows = (await sessionRows(dataDir, 'mcp-multi')) as ReadonlyArray<Row>
      const reads = responsesOf(rows, 'mcp__fs__read_text_file')
      expect(reads.map((r) => [r.content?.result, r.content?.isError ?? false])).toEqual([
        ['alpha\n', false],
        ['alpha, reviewed\n', false],
      ])
      expect(responsesOf(rows, 'mcp__fs__write_file')[0]?.content?.isError ?? false).toBe(false)
      expect(String(responsesOf(rows, 'mcp__fs__edit_file')[0]?.content?.result)).toContain('reviewed')
      // The server's stderr never reached the user's.
      expect(one.stderr + two.stderr).not.toMatch(/Secure MCP Filesystem Server|Allowed directories/)
    })
  })

  describe('when the agent is SIGKILLed in the middle of a call', () => {
    // The hold proxy passes the call to the real server and keeps its answer while DIR/hold exists.
    const heldConfig = async (root: string, workspace: string) => {
      const hold = join(root, 'hold-dir')
      await mkdir(hold, { recursive: true })
      await writeFile(join(hold, 'hold'), '')
      await projectConfig(workspace, {
        fs: { command: 'node', args: [HOLD_PROXY, hold, '--', node, FILESYSTEM_SERVER, '.'] },
      })
      return hold
    }

    it('reissues a read on resume (replay_safe) and continues', async () => {
      const { root, dataDir, workspace } = await scratch()
      await writeFile(join(workspace, 'notes.txt'), 'beta\n')
      const hold = await heldConfig(root, workspace)
      const script = await scriptFile(root, 'read.json', [
        { toolCall: { name: 'mcp__fs__read_text_file', args: { path: 'notes.txt' } } },
        { text: 'never reached' },
      ])
      await killRunWhen(['--data-dir', dataDir, '--session', 'mcp-read', '--script', script, 'read'], workspace, () =>
        existsSync(join(hold, 'held')),
      )
      await rm(join(hold, 'hold'))
      const continuation = await scriptFile(root, 'after.json', [{ text: 'Read it again.' }])
      const resumed = await runCli(
        ['resume', '--data-dir', dataDir, '--session', 'mcp-read', '--script', continuation, '--json'],
        {
          cwd: workspace,
          flag: true,
        },
      )
      expect(resumed.code).toBe(0)
      const { plan } = resumeJson<{ continuation: { settlementPlan: ReadonlyArray<{ action: string }> } }>(resumed)
      expect(plan.continuation.settlementPlan.map((e) => e.action)).toEqual(['reissue'])
      const rows = (await sessionRows(dataDir, 'mcp-read')) as ReadonlyArray<Row>
      const reads = responsesOf(rows, 'mcp__fs__read_text_file')
      expect(reads.map((r) => [r.content?.result, r.actions?.toolOutcome?.settlementOrigin])).toEqual([
        ['beta\n', 'reissue_t2'],
      ])
    })

    it('parks a write whose outcome is unknown (never_auto_retry) with tool_outcome_unknown, and runs nothing again', async () => {
      const { root, dataDir, workspace } = await scratch()
      await writeFile(join(workspace, 'notes.txt'), 'count: 1\n')
      const hold = await heldConfig(root, workspace)
      const script = await scriptFile(root, 'edit.json', [
        {
          toolCall: {
            name: 'mcp__fs__edit_file',
            args: { path: 'notes.txt', edits: [{ oldText: 'count: 1', newText: 'count: 1 + 1' }] },
          },
        },
        { text: 'never reached' },
      ])
      await killRunWhen(
        ['--data-dir', dataDir, '--session', 'mcp-write', '--yes', '--script', script, 'edit'],
        workspace,
        () => existsSync(join(hold, 'held')),
      )
      await rm(join(hold, 'hold'))
      // The edit landed before the crash: the server made it, the agent never heard.
      expect(await readFile(join(workspace, 'notes.txt'), 'utf8')).toBe('count: 1 + 1\n')
      const resumed = await runCli(['resume', '--data-dir', dataDir, '--session', 'mcp-write', '--yes', '--json'], {
        cwd: workspace,
        flag: true,
      })
      expect(resumed.code).toBe(3)
      const { plan } = resumeJson<{
        rejectionReasons: ReadonlyArray<string>
        openToolOperations: ReadonlyArray<Record<string, unknown>>
      }>(resumed)
      expect(plan.rejectionReasons).toEqual(['tool_outcome_unknown'])
      expect(plan.openToolOperations[0]).toMatchObject({
        toolName: 'mcp__fs__edit_file',
        recoveryMode: 'never_auto_retry',
      })
      expect(await readFile(join(workspace, 'notes.txt'), 'utf8')).toBe('count: 1 + 1\n')
    })

    it('continues after a person resolves the parked write as applied (maka resolve, then maka resume)', async () => {
      const { root, dataDir, workspace } = await scratch()
      await writeFile(join(workspace, 'notes.txt'), 'count: 1\n')
      const hold = await heldConfig(root, workspace)
      const script = await scriptFile(root, 'edit.json', [
        {
          toolCall: {
            name: 'mcp__fs__edit_file',
            args: { path: 'notes.txt', edits: [{ oldText: 'count: 1', newText: 'count: 2' }] },
          },
        },
        { text: 'never reached' },
      ])
      await killRunWhen(
        ['--data-dir', dataDir, '--session', 'mcp-resolve', '--yes', '--script', script, 'edit'],
        workspace,
        () => existsSync(join(hold, 'held')),
      )
      await rm(join(hold, 'hold'))
      const parked = await runCli(['resume', 'plan', '--data-dir', dataDir, '--session', 'mcp-resolve', '--json'], {
        cwd: workspace,
        flag: true,
      })
      expect(parked.code).toBe(3)
      const open = json<{ openToolOperations: ReadonlyArray<{ toolCallId: string }> }>(parked).openToolOperations
      const resolved = await runCli(
        [
          'resolve',
          'mcp-resolve',
          '--data-dir',
          dataDir,
          '--call',
          String(open[0]?.toolCallId),
          '--as',
          'applied',
          '--output',
          'count is 2 now',
        ],
        { cwd: workspace, flag: true },
      )
      expect(resolved.code).toBe(0)
      const continuation = await scriptFile(root, 'after.json', [{ text: 'Count updated.' }])
      const resumed = await runCli(
        ['resume', '--data-dir', dataDir, '--session', 'mcp-resolve', '--yes', '--script', continuation],
        { cwd: workspace, flag: true },
      )
      expect(resumed.code).toBe(0)
      // The edit happened once, and the model read the person's verdict as the call's response.
      expect(await readFile(join(workspace, 'notes.txt'), 'utf8')).toBe('count: 2\n')
      const rows = (await sessionRows(dataDir, 'mcp-resolve')) as ReadonlyArray<Row>
      const edits = responsesOf(rows, 'mcp__fs__edit_file')
      expect(edits.map((r) => r.actions?.toolOutcome?.settlementOrigin)).toEqual(['operator_adjudication'])
      expect(String(edits[0]?.content?.result)).toContain('count is 2 now')
    })

    it('reissues an idempotent write (idempotentHint) after the crash', async () => {
      const { root, dataDir, workspace } = await scratch()
      const hold = await heldConfig(root, workspace)
      const script = await scriptFile(root, 'write.json', [
        { toolCall: { name: 'mcp__fs__write_file', args: { path: 'out.txt', content: 'once\n' } } },
        { text: 'never reached' },
      ])
      await killRunWhen(
        ['--data-dir', dataDir, '--session', 'mcp-idem', '--yes', '--script', script, 'write'],
        workspace,
        () => existsSync(join(hold, 'held')),
      )
      await rm(join(hold, 'hold'))
      const continuation = await scriptFile(root, 'after.json', [{ text: 'Written.' }])
      const resumed = await runCli(
        ['resume', '--data-dir', dataDir, '--session', 'mcp-idem', '--yes', '--script', continuation, '--json'],
        { cwd: workspace, flag: true },
      )
      expect(resumed.code).toBe(0)
      const rows = (await sessionRows(dataDir, 'mcp-idem')) as ReadonlyArray<Row>
      expect(responsesOf(rows, 'mcp__fs__write_file').map((r) => r.actions?.toolOutcome?.settlementOrigin)).toEqual([
        'reissue_t2',
      ])
      expect(await readFile(join(workspace, 'out.txt'), 'utf8')).toBe('once\n')
    })
  })

  describe('when the server changed between the crash and the resume', () => {
    // A turn killed after its `lookup` result was committed, on the toy server of variant a.
    const crashedOnToy = async () => {
      const world = await scratch()
      await projectConfig(world.workspace, { toy: { command: 'node', args: [TOY_SERVER, '--variant', 'a'] } })
      const script = await scriptFile(world.root, 'slow.json', [
        { toolCall: { name: 'mcp__toy__lookup', args: { key: 'k' } } },
        { delayMs: 60_000 },
        { text: 'never reached' },
      ])
      await killRunWhen(
        ['--data-dir', world.dataDir, '--session', 'mcp-changed', '--script', script, 'look up k'],
        world.workspace,
        async () =>
          existsSync(join(world.dataDir, 'sessions', 'mcp-changed')) &&
          (await sessionRows(world.dataDir, 'mcp-changed').catch(() => [])).some(
            (r) => (r as Row).content?.kind === 'function_response',
          ),
      )
      return world
    }

    it.each([
      {
        name: 'the schema changed',
        servers: { toy: { command: 'node', args: [TOY_SERVER, '--variant', 'b'] } },
        serverTools: [{ toolName: 'mcp__toy__lookup', server: 'toy', change: 'changed' }],
      },
      {
        name: 'the server is gone from the config',
        servers: {},
        serverTools: [{ toolName: 'mcp__toy__lookup', server: 'toy', change: 'absent' }],
      },
      {
        name: 'the server does not start',
        servers: { toy: { command: 'maka-no-such-server' } },
        serverTools: [
          {
            toolName: 'mcp__toy__lookup',
            server: 'toy',
            change: 'server_unavailable',
            serverReason: 'its command could not be started (ENOENT)',
          },
        ],
      },
    ])('parks tool_catalog_mismatch naming the server and the tool when $name', async ({ servers, serverTools }) => {
      const { dataDir, workspace } = await crashedOnToy()
      await projectConfig(workspace, servers)
      const planned = await runCli(['resume', 'plan', '--data-dir', dataDir, '--session', 'mcp-changed', '--json'], {
        cwd: workspace,
        flag: true,
      })
      expect(planned.code).toBe(3)
      const plan = json<{
        rejectionReasons: ReadonlyArray<string>
        diagnostics: ReadonlyArray<{ code: string; detail: unknown }>
      }>(planned)
      expect(plan.rejectionReasons).toEqual(['tool_catalog_mismatch'])
      expect(plan.diagnostics.find((d) => d.code === 'tool_catalog_mismatch')?.detail).toEqual({
        missingToolNames: ['mcp__toy__lookup'],
        serverTools,
      })
      const resumed = await runCli(['resume', '--data-dir', dataDir, '--session', 'mcp-changed'], {
        cwd: workspace,
        flag: true,
      })
      expect(resumed.code).toBe(3)
      expect(resumed.stdout).toContain('tool_catalog_mismatch')
    })

    it('continues when the server declares the tool as it did', async () => {
      const { root, dataDir, workspace } = await crashedOnToy()
      const continuation = await scriptFile(root, 'after.json', [{ text: 'k has a value.' }])
      const resumed = await runCli(
        ['resume', '--data-dir', dataDir, '--session', 'mcp-changed', '--script', continuation],
        {
          cwd: workspace,
          flag: true,
        },
      )
      expect(resumed.code).toBe(0)
    })
  })

  describe('when a server misbehaves during a turn', () => {
    it.each([
      { tool: 'crash', sentence: 'The MCP server "toy" stopped during the call; the call has no result.' },
      { tool: 'hang', sentence: 'The MCP server "toy" did not answer within 700 ms; the call was cancelled.' },
      { tool: 'garbage', sentence: /The MCP server "toy" wrote something that is not MCP on its stdout/ },
    ])('gives the model an error result when it calls $tool, and the turn goes on', async ({ tool, sentence }) => {
      const { root, dataDir, workspace } = await scratch()
      await projectConfig(workspace, {
        toy: {
          command: 'node',
          args: [TOY_SERVER, '--log', join(root, 'toy.log')],
          env: { TOY_SECRET: '${TOY_SECRET_VALUE}' },
        },
        fs: filesystemEntry,
      })
      const script = await scriptFile(root, 'bad.json', [
        { toolCall: { name: `mcp__toy__${tool}`, args: {} } },
        { toolCall: { name: 'mcp__fs__list_directory', args: { path: '.' } } },
        { text: 'Carried on.' },
      ])
      const result = await runCli(
        [
          'run',
          '--data-dir',
          dataDir,
          '--session',
          `mcp-${tool}`,
          '--yes',
          '--timeout',
          '700',
          '--script',
          script,
          'try it',
        ],
        { cwd: workspace, flag: true, env: { TOY_SECRET_VALUE: 'toy-secret-4bd1' } },
      )
      expect(result.code).toBe(0)
      noStackTrace(result)
      const rows = (await sessionRows(dataDir, `mcp-${tool}`)) as ReadonlyArray<Row>
      const failed = responsesOf(rows, `mcp__toy__${tool}`)
      expect(failed).toHaveLength(1)
      expect(failed[0]?.content?.isError).toBe(true)
      expect(String(failed[0]?.content?.result)).toMatch(sentence)
      // Nothing lost: the next call ran and the turn completed.
      expect(String(responsesOf(rows, 'mcp__fs__list_directory')[0]?.content?.result)).toContain('hello.txt')
      // The server's stderr (which echoes its secret) reached neither the user nor the data dir.
      expect(result.stderr).not.toContain('toy-secret-4bd1')
      expect(result.stderr).not.toContain('toy server starting')
      expect(await everythingUnder(dataDir)).not.toContain('toy-secret-4bd1')
      // The command stopped the server when it ended.
      const pid = Number(/^pid (\d+)$/m.exec(await readFile(join(root, 'toy.log'), 'utf8'))?.[1])
      await waitFor('the server to be stopped', () => {
        try {
          process.kill(pid, 0)
          return false
        } catch {
          return true
        }
      })
    })
  })

  describe('when the person presses Ctrl+C during a call', () => {
    it('sends MCP cancellation to the server and the run ends cancelled (exit 130)', async () => {
      const { root, dataDir, workspace } = await scratch()
      const log = join(root, 'toy.log')
      await projectConfig(workspace, { toy: { command: 'node', args: [TOY_SERVER, '--log', log] } })
      const script = await scriptFile(root, 'hang.json', [
        { toolCall: { name: 'mcp__toy__hang', args: {} } },
        { text: 'never reached' },
      ])
      const child = spawn(
        node,
        [CLI, 'run', '--data-dir', dataDir, '--session', 'mcp-cancel', '--yes', '--script', script, 'wait for it'],
        { cwd: workspace, env: cliEnv(true), stdio: ['ignore', 'pipe', 'pipe'] },
      )
      const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)))
      await waitFor('the call to reach the server', async () =>
        (await readFile(log, 'utf8').catch(() => '')).includes('hang called'),
      )
      child.kill('SIGINT')
      expect(await exited).toBe(130)
      await waitFor('the cancellation', async () => (await readFile(log, 'utf8')).includes('hang cancelled'))
      const rows = (await sessionRows(dataDir, 'mcp-cancel')) as ReadonlyArray<Row>
      expect(responsesOf(rows, 'mcp__toy__hang')[0]?.content?.isError).toBe(true)
    })
  })

  describe('when a config file is bad', () => {
    it.each([
      {
        name: 'a key of the wrong shape',
        text: JSON.stringify({ mcpServers: { fs: { command: 'node', args: 'x' } } }),
        key: 'mcpServers.fs.args',
      },
      {
        name: 'an unset variable',
        text: JSON.stringify({ mcpServers: { fs: { command: 'node', env: { T: '${MAKA_TEST_UNSET}' } } } }),
        key: 'mcpServers.fs.env.T',
      },
      { name: 'not JSON', text: '{ mcpServers: ', key: null },
    ])('exits 2 with a sentence naming the file and the key ($name)', async ({ text, key }) => {
      const { root, dataDir, workspace } = await scratch()
      await writeFile(join(workspace, '.mcp.json'), text)
      const result = await runCli(['run', '--data-dir', dataDir, 'hello'], { cwd: workspace, flag: true })
      expect(result.code).toBe(2)
      expect(result.stderr).toContain(join(workspace, '.mcp.json'))
      if (key !== null) expect(result.stderr).toContain(key)
      noStackTrace(result)
      // --mcp-config names a file that must exist.
      const missing = await runCli(['run', '--data-dir', dataDir, '--mcp-config', join(root, 'nope.json'), 'hello'], {
        cwd: root,
        flag: true,
      })
      expect(missing.code).toBe(2)
      expect(missing.stderr).toContain(join(root, 'nope.json'))
    })
  })

  describe('maka mcp list', () => {
    it('lists each server with its state and each tool with its mode and why, never a secret', async () => {
      const { root, dataDir, workspace } = await scratch()
      await mkdir(dataDir, { recursive: true })
      // The user's file in the data dir, the project's, and one given with --mcp-config.
      await writeFile(
        join(dataDir, 'mcp.json'),
        JSON.stringify({
          mcpServers: { everything: { command: 'node', args: [EVERYTHING_SERVER], env: { KEY: '${MCP_LIST_KEY}' } } },
        }),
      )
      await projectConfig(workspace, { fs: filesystemEntry })
      const extra = join(root, 'extra.json')
      await writeFile(extra, JSON.stringify({ mcpServers: { broken: { command: 'maka-no-such-server' } } }))
      const env = { MCP_LIST_KEY: 'list-secret-91ac' }
      const text = await runCli(['mcp', 'list', '--data-dir', dataDir, '--mcp-config', extra], { cwd: workspace, env })
      expect(text.code).toBe(0)
      expect(text.stdout).toMatch(/^fs {2}connected {2}stdio/m)
      expect(text.stdout).toMatch(/mcp__fs__read_text_file +replay_safe +readOnlyHint: true/)
      expect(text.stdout).toMatch(/mcp__fs__write_file +idempotent +idempotentHint: true/)
      expect(text.stdout).toMatch(/mcp__fs__edit_file +never_auto_retry +neither readOnlyHint nor idempotentHint/)
      expect(text.stdout).toMatch(/^broken {2}failed/m)
      expect(text.stdout).toContain('its command could not be started (ENOENT)')
      const listed = await runCli(['mcp', 'list', '--json', '--data-dir', dataDir, '--mcp-config', extra], {
        cwd: workspace,
        env,
      })
      const body = json<{
        files: ReadonlyArray<string>
        servers: ReadonlyArray<{
          name: string
          state: string
          tools: ReadonlyArray<{ name: string; recoveryMode: string }>
        }>
      }>(listed)
      expect(body.files).toEqual([join(dataDir, 'mcp.json'), join(workspace, '.mcp.json'), extra])
      expect(body.servers.map((s) => [s.name, s.state])).toEqual([
        ['broken', 'failed'],
        ['everything', 'connected'],
        ['fs', 'connected'],
      ])
      expect(body.servers[1]?.tools.find((t) => t.name === 'mcp__everything__echo')?.recoveryMode).toBe('replay_safe')
      for (const out of [text, listed]) expect(out.stdout + out.stderr).not.toContain('list-secret-91ac')
      // doctor checks each server.
      const doctor = await runCli(['doctor', '--json', '--data-dir', dataDir, '--mcp-config', extra], {
        cwd: workspace,
        env,
      })
      const checks = json<{ checks: ReadonlyArray<{ name: string; status: string }> }>(doctor).checks
      expect(checks.filter((c) => c.name.startsWith('mcp ')).map((c) => [c.name, c.status])).toEqual([
        ['mcp broken', 'fail'],
        ['mcp everything', 'ok'],
        ['mcp fs', 'ok'],
      ])
      expect(doctor.stdout).not.toContain('list-secret-91ac')
    })
  })
})
