/**
 * `maka doctor [--json]`: checks what a day's work needs — the settings file, the safe-resume flag,
 * the model of new sessions and its key, its endpoint (one small `GET <baseUrl>/models`), the data
 * directory, the store, each configured MCP server — and the interrupted sessions waiting, each with the fix when it is not
 * right (decision 192). Reads only: nothing is written, no model is called. Exit 0 when nothing
 * failed (warnings allowed), 1 otherwise. Never prints a key, a response body or a prompt.
 */
import { ExitCode } from '../ExitCode.js'
import type { DoctorFlags, GlobalFlags } from '../CommandFlags.js'
import { checkDataDir, resolveDataDir } from '../hostInput.js'
import { type ProviderChoice, requireProviderFlags } from '../providerChoice.js'
import { describeModel, resolveTurnSetup } from '../sessionSetup.js'
import { chooseStore, describeStore } from '../storeChoice.js'
import { styleForStdout } from '../Style.js'
import { type LoadedConfig, configEntries, loadUserConfig, safeResumeSetting } from '../userConfig.js'
import { openDataDir, say, sayJson } from './commandContext.js'
import { type CommandMcp, openCommandMcp } from '../commandMcp.js'
import { currentFolder, interruptedFirst } from './pickSession.js'
import { readSummaries } from './sessions.js'

/**
 * One check: `ok`, `warn` (works, but not as a day's work wants it) or `fail`, with the fix.
 * @category models
 */
export interface DoctorCheck {
  readonly name: string
  readonly status: 'ok' | 'warn' | 'fail'
  readonly detail: string
  readonly fix?: string
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const ENDPOINT_TIMEOUT_MS = 5_000

/**
 * One small request to an OpenAI-compatible endpoint (`GET <baseUrl>/models`, the key as a bearer
 * token): whether it answers and accepts the key. The body is never read into a line.
 * @category constructors
 */
export const checkEndpoint = async (
  choice: Extract<ProviderChoice, { readonly kind: 'openai-compatible' }>,
  fetchImpl: typeof fetch = fetch,
): Promise<DoctorCheck> => {
  const url = `${choice.baseUrl.replace(/\/+$/, '')}/models`
  try {
    const response = await fetchImpl(url, {
      headers: { authorization: `Bearer ${choice.apiKey}` },
      signal: AbortSignal.timeout(ENDPOINT_TIMEOUT_MS),
    })
    await response.body?.cancel()
    if (response.ok)
      return { name: 'endpoint', status: 'ok', detail: `${choice.baseUrl} answered (HTTP ${response.status})` }
    if (response.status === 401 || response.status === 403) {
      return {
        name: 'endpoint',
        status: 'fail',
        detail: `${choice.baseUrl} refused the key (HTTP ${response.status})`,
        fix: 'check the key in the variable the profile names (apiKeyEnv, else MAKA_API_KEY)',
      }
    }
    if (response.status === 404) {
      return {
        name: 'endpoint',
        status: 'warn',
        detail: `${choice.baseUrl} answered HTTP 404 for /models (some servers list no models; a turn will tell)`,
        fix: 'check the base URL: OpenAI-compatible servers usually end it with /v1',
      }
    }
    return {
      name: 'endpoint',
      status: 'fail',
      detail: `${choice.baseUrl} answered HTTP ${response.status}`,
      fix: 'check the server and the base URL (maka config get profiles.NAME.baseUrl)',
    }
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')
    const code =
      error instanceof Error && typeof (error.cause as { code?: unknown } | undefined)?.code === 'string'
        ? String((error.cause as { code: string }).code)
        : null
    return {
      name: 'endpoint',
      status: 'fail',
      detail: timedOut
        ? `${choice.baseUrl} did not answer within ${ENDPOINT_TIMEOUT_MS / 1000} s`
        : `${choice.baseUrl} cannot be reached${code === null ? '' : ` (${code})`}`,
      fix: 'start the server, or fix the base URL (maka config set profiles.NAME.baseUrl URL)',
    }
  }
}

const settingsCheck = async (
  home: string,
): Promise<{ readonly check: DoctorCheck; readonly loaded: LoadedConfig | null }> => {
  try {
    const loaded = await loadUserConfig(home)
    const keys = configEntries(loaded.config).length
    return {
      loaded,
      check: {
        name: 'settings',
        status: 'ok',
        detail: loaded.exists
          ? `${loaded.file} (${keys} key${keys === 1 ? '' : 's'})`
          : `${loaded.file} not written yet (defaults)`,
      },
    }
  } catch (error) {
    return {
      loaded: null,
      check: {
        name: 'settings',
        status: 'fail',
        detail: messageOf(error),
        fix: 'fix the file by hand, or remove the key it names (maka config unset KEY)',
      },
    }
  }
}

/**
 * One check per configured MCP server (started, asked for its tools, stopped), or one failed check
 * for a bad config file; none when no config file applies, so a doctor without MCP reads as before.
 * @category constructors
 */
export const mcpChecks = async (home: string, flags: DoctorFlags): Promise<ReadonlyArray<DoctorCheck>> => {
  let mcp: CommandMcp
  try {
    mcp = await openCommandMcp({
      dataHome: home,
      cwd: currentFolder(),
      ...(flags.mcpConfig === undefined ? {} : { configFile: flags.mcpConfig }),
      ...(flags.timeout === undefined ? {} : { timeout: flags.timeout }),
      warn: false,
    })
  } catch (error) {
    return [{ name: 'mcp config', status: 'fail', detail: messageOf(error), fix: 'fix the key it names in that file' }]
  }
  try {
    return mcp.servers.map((s): DoctorCheck => {
      if (s.state === 'failed') {
        return {
          name: `mcp ${s.name}`,
          status: 'fail',
          detail: `did not start: ${s.reason ?? 'unknown'} (${s.file})`,
          fix: `check its command or URL in ${s.file}; maka mcp list shows every server`,
        }
      }
      const asks = s.tools.filter((t) => t.recoveryMode === 'never_auto_retry').length
      return {
        name: `mcp ${s.name}`,
        status: 'ok',
        detail: `${s.tools.length} tool${s.tools.length === 1 ? '' : 's'} (${asks} that a crash leaves for a person to settle) · ${s.transport} · ${s.file}`,
      }
    })
  } finally {
    await mcp.close()
  }
}

/**
 * Runs every check.
 * @category constructors
 */
export const doctorChecks = async (flags: DoctorFlags, globals: GlobalFlags): Promise<ReadonlyArray<DoctorCheck>> => {
  const checks: Array<DoctorCheck> = []
  const home = resolveDataDir(globals.dataDir)
  const settings = await settingsCheck(home)
  checks.push(settings.check)
  const loaded = settings.loaded ?? { file: '', exists: false, config: { profiles: {} } }
  const flag = process.env['MAKA_RUNTIME_SAFE_BOUNDARY_RESUME']
  const from = flag !== undefined && flag !== '' ? 'MAKA_RUNTIME_SAFE_BOUNDARY_RESUME' : 'settings'
  checks.push(
    safeResumeSetting(loaded.config)
      ? { name: 'safe resume', status: 'ok', detail: `on (${from})` }
      : {
          name: 'safe resume',
          status: 'warn',
          detail: `off (${from === 'settings' ? 'not set' : from}): an interrupted turn cannot be continued`,
          fix: 'maka config set safeResume true',
        },
  )
  try {
    requireProviderFlags(flags)
    const setup = await resolveTurnSetup({ flags, settings: loaded, recorded: null, canAsk: false })
    checks.push({
      name: 'model',
      status: 'ok',
      detail: `${describeModel(setup.choice)} · permission mode ${setup.permissionMode} (for a new session of maka run)`,
    })
    if (setup.choice.kind === 'openai-compatible') checks.push(await checkEndpoint(setup.choice))
  } catch (error) {
    checks.push({
      name: 'model',
      status: 'fail',
      detail: messageOf(error),
      fix: 'set the variable it names, or choose a profile (maka config set profile NAME)',
    })
  }
  checks.push(...(await mcpChecks(home, flags)))
  let spec: ReturnType<typeof chooseStore> = null
  try {
    spec = chooseStore(globals.store)
  } catch (error) {
    checks.push({ name: 'store', status: 'fail', detail: messageOf(error), fix: 'fix --store or MAKA_STORE' })
    return checks
  }
  try {
    const dir = await checkDataDir(home, 'write')
    checks.push({
      name: 'data dir',
      status: 'ok',
      detail: dir.exists ? `${home} (writable)` : `${home} (created by the first run)`,
    })
  } catch (error) {
    checks.push({
      name: 'data dir',
      status: 'fail',
      detail: messageOf(error),
      fix: 'make it a directory you can write, or choose another with MAKA_HOME / --data-dir',
    })
  }
  try {
    const workspace = await openDataDir(globals, 'read')
    const summaries = await readSummaries(workspace)
    checks.push({
      name: 'store',
      status: 'ok',
      detail: `${spec === null ? `jsonl ${workspace.dataDir.path}` : describeStore(spec)}: ${summaries.length} session${summaries.length === 1 ? '' : 's'}`,
    })
    const interrupted = interruptedFirst(summaries)
    const folder = currentFolder()
    const here = interrupted.filter((s) => s.cwd === folder).length
    if (interrupted.length > 0) {
      checks.push({
        name: 'interrupted',
        status: 'warn',
        detail: `${interrupted.length} interrupted session${interrupted.length === 1 ? '' : 's'} (${here} in this folder)`,
        fix: 'maka resume (this folder first), or maka resume --pick',
      })
    }
  } catch (error) {
    checks.push({
      name: 'store',
      status: 'fail',
      detail: messageOf(error),
      fix: 'check the store (--store, MAKA_STORE) and that it can be read',
    })
  }
  return checks
}

/**
 * Prints the checks; exit 1 when one failed.
 * @category constructors
 */
export const doctor = async (flags: DoctorFlags, globals: GlobalFlags): Promise<ExitCode> => {
  const checks = await doctorChecks(flags, globals)
  const failed = checks.some((check) => check.status === 'fail')
  if (flags.json === true) {
    sayJson({ ok: !failed, checks })
    return failed ? ExitCode.failed : ExitCode.ok
  }
  const style = styleForStdout()
  const mark = { ok: style.green('ok  '), warn: style.yellow('warn'), fail: style.red('FAIL') } as const
  for (const check of checks) {
    say(`${mark[check.status]}  ${check.name.padEnd(12)} ${check.detail}`)
    if (check.fix !== undefined && check.status !== 'ok')
      say(`      ${' '.repeat(12)} ${style.dim(`fix: ${check.fix}`)}`)
  }
  return failed ? ExitCode.failed : ExitCode.ok
}
