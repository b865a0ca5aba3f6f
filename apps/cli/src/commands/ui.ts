/**
 * `maka ui [--port N] [--no-open]`: the desktop renderer in a browser, for machines without
 * Electron. The renderer and its handlers are `@maka/session-ui`'s (the ones Electron's main process
 * registers), served on 127.0.0.1 with a per-run token by its server. Start-up recovers the whole data
 * dir and, with `MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1`, continues every eligible interrupted
 * session; without the flag the UI lists, shows and runs turns but offers no resume (decision 70).
 * Runs until SIGINT or SIGTERM: running turns are cancelled durably, exit 0.
 */
import { spawn } from 'node:child_process'
import { errnoCode } from '@maka/stores'
import { ExitCode, BadInputError } from '../ExitCode.js'
import type { GlobalFlags, UiFlags } from '../CommandFlags.js'
import * as E from 'fp-ts/lib/Either.js'
import { resolveDataDir } from '../hostInput.js'
import { requireProviderFlags } from '../providerChoice.js'
import { recordedSetupOf, resolveTurnSetup, sessionContinuationResolver } from '../sessionSetup.js'
import { loadUserConfig, safeResumeSetting } from '../userConfig.js'
import { openDataDir, say } from './commandContext.js'
import { toolJournalFromEnv } from '../composeRuntime.js'
import { WEB_UI, loadOptional } from '../optionalPackage.js'

const parsePort = (text: string | undefined): number => {
  if (text === undefined) return 0
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new BadInputError('--port must be a whole number between 1 and 65535.')
  }
  return port
}

// A graphical session only: on a bare terminal xdg-open may start a text browser in this terminal.
const openBrowser = (url: string): void => {
  const command =
    process.platform === 'darwin'
      ? 'open'
      : process.platform === 'win32'
        ? 'explorer'
        : process.env['DISPLAY'] !== undefined || process.env['WAYLAND_DISPLAY'] !== undefined
          ? 'xdg-open'
          : null
  if (command === null) return
  const child = spawn(command, [url], { stdio: 'ignore', detached: true })
  child.on('error', () => {})
  child.unref()
}

/**
 * Serves the UI until a signal stops it.
 * @category constructors
 */
export const ui = async (flags: UiFlags, globals: GlobalFlags): Promise<ExitCode> => {
  const port = parsePort(flags.port)
  requireProviderFlags(flags)
  // Before the data dir is opened: without the UI package nothing is created.
  const { makeMessageHub, makeSessionServices, rendererDir, serveUi } = await loadOptional(WEB_UI, async () => {
    const loaded = await import('@maka/session-ui')
    // Bundled, the module loads without the package; its renderer files are still the package's.
    loaded.rendererDir()
    return loaded
  })
  const settings = await loadUserConfig(resolveDataDir(globals.dataDir))
  // The setup of a new session (and the flags checked before anything is served).
  const fresh = await resolveTurnSetup({ flags, settings, recorded: null, canAsk: true })
  const workspace = await openDataDir(globals, 'write', 'async')
  const safeResume = safeResumeSetting(settings.config)
  const sayUsing = (sessionId: string, line: string) =>
    say(`maka ui: session ${sessionId}: ${line.replace(/^maka: /, '')}`)
  const messages = makeMessageHub()
  const services = makeSessionServices({
    dataDir: workspace.dataDir.path,
    safeResume,
    toolJournal: toolJournalFromEnv(),
    choice: fresh.choice,
    providerFlags: flags,
    permissionMode: fresh.permissionMode,
    // A new message keeps the setup the session's latest run recorded unless a flag says otherwise.
    turnSetupFor: async (sessionId) => {
      try {
        const recorded = await recordedSetupOf(workspace.stores, sessionId)
        const setup = await resolveTurnSetup({ flags, settings, recorded, canAsk: true })
        sayUsing(sessionId, setup.line)
        return E.right({ choice: setup.choice, permissionMode: setup.permissionMode })
      } catch (error) {
        return E.left(error instanceof Error ? error.message : String(error))
      }
    },
    resolveContinuationProvider: sessionContinuationResolver({
      flags,
      settings,
      canAsk: true,
      defaults: { turn: [], continuation: [] },
      onSetup: (line) => say(`maka ui: ${line.replace(/^maka: /, '')}`),
    }),
    emit: (message) => messages.publish(message),
  })
  let server
  try {
    server = await serveUi({
      services,
      messages,
      rendererDir: rendererDir(),
      port,
      onWaitsStopped: (count) =>
        say(`maka ui: every page closed; stopped waiting for ${count} command(s); nothing was written.`),
    })
  } catch (error) {
    if (errnoCode(error) === 'EADDRINUSE')
      throw new BadInputError(`Port ${port} is in use: pick another with --port or omit it.`)
    throw error
  }
  // Listen for the stop signals before the first line a caller can act on: a SIGINT or SIGTERM that
  // arrives while start-up recovery runs still stops the server cleanly (after the pass), instead of
  // killing the process with Node's default handler.
  const stopped = new Promise<void>((stop) => {
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
  say(`maka ui: listening on ${server.origin} (127.0.0.1 only; every request needs this run's token)`)
  say(`maka ui: data dir ${workspace.dataDir.path} · safe resume ${safeResume ? 'on' : 'off'}`)
  say(`maka ui: new sessions: ${fresh.line.replace(/^maka: /, '')}`)
  say(`Open ${server.url}`)
  const report = await services.startup()
  say(
    `maka ui: startup recovery ${report.recoveryActions} action${report.recoveryActions === 1 ? '' : 's'}` +
      (safeResume ? ` · ${report.continued.length} interrupted session(s) continuing` : '') +
      (report.waiting.length > 0 ? ` · ${report.waiting.length} waiting for a command still running` : ''),
  )
  if (flags.open) openBrowser(server.url)
  await stopped
  await services.cancelAll()
  await server.close()
  return ExitCode.ok
}
