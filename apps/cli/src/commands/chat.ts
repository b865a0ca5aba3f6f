/**
 * `maka chat [--session ID] [--cwd DIR]`: the interactive TUI. Input is checked here (bad input
 * exits 2 before the screen opens); the screen itself is loaded lazily. Permission mode `ask` by
 * default, `allow` with `--yes`. An unknown `--session` id names a new session.
 */
import { withCiVariablesHidden } from '../inkLoading.js'
import { randomUUID } from 'node:crypto'
import { BadInputError, type ExitCode } from '../ExitCode.js'
import { requireDirectory, requireSafeId, resolveDataDir } from '../hostInput.js'
import type { ChatFlags, GlobalFlags } from '../CommandFlags.js'
import { requireProviderFlags } from '../providerChoice.js'
import { recordedSetupOf, resolveTurnSetup, sessionContinuationResolver } from '../sessionSetup.js'
import { loadUserConfig, safeResumeOffHint, safeResumeSetting } from '../userConfig.js'
import { openDataDir } from './commandContext.js'
import { openCommandMcp } from '../commandMcp.js'

/**
 * Opens the chat screen.
 * @category constructors
 */
export const chat = async (flags: ChatFlags, globals: GlobalFlags): Promise<ExitCode> => {
  if (flags.session !== undefined) requireSafeId('session', flags.session)
  requireProviderFlags(flags)
  const settings = await loadUserConfig(resolveDataDir(globals.dataDir))
  const cwd = await requireDirectory(flags.cwd ?? process.cwd())
  const { dataDir, stores, verbose } = await openDataDir(globals, 'write', 'async')
  // A session keeps the setup its latest run recorded unless a flag says otherwise (decision 186).
  const recorded = flags.session !== undefined && dataDir.exists ? await recordedSetupOf(stores, flags.session) : null
  const setup = await resolveTurnSetup({ flags, settings, recorded, canAsk: true })
  const safeResume = safeResumeSetting(settings.config)
  if (process.stdin.isTTY !== true)
    throw new BadInputError('maka chat needs a terminal; use maka run for a headless turn.')
  process.stderr.write(`${setup.line}\n`)
  if (!safeResume) process.stderr.write(`${safeResumeOffHint}\n`)
  // The servers of the session's folder run while the chat is open.
  const mcp = await openCommandMcp({
    dataHome: resolveDataDir(globals.dataDir),
    cwd,
    ...(flags.mcpConfig === undefined ? {} : { configFile: flags.mcpConfig }),
    ...(flags.timeout === undefined ? {} : { timeout: flags.timeout }),
  })
  const { runChat } = await withCiVariablesHidden(() => import('../ui/runChat.js'))
  try {
    return await runChat({
      dataDir: dataDir.path,
      stores,
      sessionId: flags.session ?? `session-${randomUUID().replace(/-/g, '').slice(0, 20)}`,
      cwd,
      choice: setup.choice,
      providerFlags: flags,
      permissionMode: setup.permissionMode,
      resolveContinuationProvider: (scripts) =>
        sessionContinuationResolver({ flags, settings, canAsk: true, defaults: scripts, onSetup: () => {} }),
      safeBoundaryResumeEnabled: safeResume,
      verbose,
      mcp,
    })
  } finally {
    await mcp.close()
  }
}
