/**
 * `maka mcp list [--json] [--cwd DIR] [--mcp-config FILE]`: every configured MCP server — the
 * user's `mcp.json` in the data dir, the project's `.mcp.json` in the folder, `--mcp-config` — is
 * started, asked for its tools and stopped. Printed: each server with its state (or why it did not
 * start) and each tool with the recovery mode it gets and why. Never a value of an entry (`env`,
 * `headers`, `args` may hold secrets): a stdio server is shown by its transport, an HTTP server by
 * its URL. Exit 0 (also when a server did not start: that is what the list shows), 2 for a bad
 * config file or flag.
 */
import { ExitCode } from '../ExitCode.js'
import type { GlobalFlags, McpListFlags } from '../CommandFlags.js'
import { openCommandMcp } from '../commandMcp.js'
import { requireDirectory, resolveDataDir } from '../hostInput.js'
import { styleForStdout } from '../Style.js'
import { say, sayJson } from './commandContext.js'

/**
 * Lists the servers and their tools.
 * @category constructors
 */
export const mcpList = async (flags: McpListFlags, globals: GlobalFlags): Promise<ExitCode> => {
  const cwd = await requireDirectory(flags.cwd ?? process.cwd())
  const dataHome = resolveDataDir(globals.dataDir)
  const mcp = await openCommandMcp({
    dataHome,
    cwd,
    ...(flags.mcpConfig === undefined ? {} : { configFile: flags.mcpConfig }),
    warn: false,
  })
  try {
    const servers = mcp.servers.map((s) => ({
      name: s.name,
      transport: s.transport,
      file: s.file,
      state: s.state,
      ...(s.reason === undefined ? {} : { reason: s.reason }),
      tools: s.tools.map((t) => ({
        name: t.toolName,
        serverToolName: t.serverToolName,
        recoveryMode: t.recoveryMode,
        permission: t.mutates ? 'asks' : 'none',
        why: t.why,
      })),
      ...(s.skippedTools.length === 0 ? {} : { skippedTools: s.skippedTools }),
    }))
    if (flags.json === true) {
      sayJson({ files: mcp.files, servers })
      return ExitCode.ok
    }
    const style = styleForStdout()
    if (servers.length === 0) {
      say(
        `No MCP servers configured (looked for ${dataHome}/mcp.json, ${cwd}/.mcp.json${flags.mcpConfig === undefined ? '' : ` and ${flags.mcpConfig}`}).`,
      )
      return ExitCode.ok
    }
    const width = Math.max(...servers.flatMap((s) => s.tools.map((t) => t.name.length)), 8)
    for (const server of servers) {
      const state = server.state === 'connected' ? style.green('connected') : style.red('failed')
      say(`${style.bold(server.name)}  ${state}  ${server.transport}  ${style.dim(server.file)}`)
      if (server.reason !== undefined) say(`  ${server.reason}; its tools are not available`)
      for (const tool of server.tools) {
        say(`  ${tool.name.padEnd(width)}  ${tool.recoveryMode.padEnd(16)}  ${style.dim(tool.why)}`)
      }
      for (const skipped of server.skippedTools ?? [])
        say(`  ${style.yellow(`skipped ${skipped.name}`)}: ${skipped.reason}`)
    }
    return ExitCode.ok
  } finally {
    await mcp.close()
  }
}
