/**
 * `maka resume --pick`: the interrupted sessions, newest first — each with its title, how long ago
 * it was interrupted, its folder, and whether it can continue or why not (a dry-run plan after the
 * recovery pass, as `maka resume` makes) — and a list to choose one from; the chosen session is
 * resumed as `maka resume --session ID` would. Without a terminal the list is printed and the
 * command exits 2 asking for `--session` (decision 191). The entries are built by `pickEntries`,
 * which the chat's `/resume` list uses too (decision 240).
 */
import { withCiVariablesHidden } from '../inkLoading.js'
import { describeCode } from '@maka/events'
import type { Runtime } from '@maka/executor'
import type { SessionSummary } from '@maka/sessions'
import { composeRuntime } from '../composeRuntime.js'
import { openCommandMcp } from '../commandMcp.js'
import { BadInputError, ExitCode } from '../ExitCode.js'
import type { GlobalFlags, ResumeFlags } from '../CommandFlags.js'
import { resolveDataDir } from '../hostInput.js'
import { providerForRuns } from '../providerChoice.js'
import { loadUserConfig, safeResumeSetting } from '../userConfig.js'
import { openDataDir, recoveryForPlanning, say } from './commandContext.js'
import { interruptedFirst } from './pickSession.js'
import { readSummaries } from './sessions.js'

/**
 * One interrupted session as the pick list shows it.
 * @category models
 */
export interface PickEntry {
  readonly sessionId: string
  readonly title: string
  readonly age: string
  readonly folder: string
  /** `can continue`, or `cannot continue: <the first reason's sentence>`. */
  readonly verdict: string
  readonly canContinue: boolean
}

/**
 * How long ago an instant was, in the largest whole unit.
 * @category constructors
 */
export const ageOf = (iso: string | null | undefined, now: number = Date.now()): string => {
  const at = iso === null || iso === undefined ? Number.NaN : Date.parse(iso)
  if (Number.isNaN(at)) return 'at an unknown time'
  const minutes = Math.floor(Math.max(0, now - at) / 60_000)
  if (minutes < 1) return 'just now'
  if (minutes < 60) return `${minutes} min ago`
  const hours = Math.floor(minutes / 60)
  if (hours < 48) return `${hours} h ago`
  return `${Math.floor(hours / 24)} days ago`
}

/**
 * The line of one entry.
 * @category constructors
 */
export const pickLine = (entry: PickEntry): string =>
  `${entry.title} · ${entry.age} · ${entry.folder} · ${entry.verdict} (${entry.sessionId})`

/**
 * The pick list's entries of interrupted sessions (already in `interruptedFirst` order): each planned
 * by the runtime (a dry run, nothing is written); a session recovery refused to repair cannot
 * continue (`recovery_unwritable`). Shared by `maka resume --pick` and the chat's `/resume` list.
 * @category constructors
 */
export const pickEntries = async (
  planner: Pick<Runtime, 'plan'>,
  interrupted: ReadonlyArray<SessionSummary>,
  refused: { has(sessionId: string): boolean },
  now: number = Date.now(),
): Promise<ReadonlyArray<PickEntry>> => {
  const entries: Array<PickEntry> = []
  for (const summary of interrupted) {
    // A session recovery could not repair here cannot continue here (it parks recovery_unwritable).
    const plan = refused.has(summary.sessionId)
      ? { disposition: 'park', rejectionReasons: ['recovery_unwritable'] }
      : await planner.plan({ sessionId: summary.sessionId })
    const [first, ...rest] = plan.rejectionReasons
    const canContinue = plan.disposition === 'continue'
    entries.push({
      sessionId: summary.sessionId,
      title: summary.title ?? '(untitled)',
      age: ageOf(summary.latestRun?.createdAt ?? summary.createdAt, now),
      folder: summary.cwd ?? '?',
      canContinue,
      verdict: canContinue
        ? 'can continue'
        : `cannot continue: ${first === undefined ? 'no safe boundary' : describeCode(first).replace(/\.$/, '')}${rest.length === 0 ? '' : ` (+${rest.length} more)`}`,
    })
  }
  return entries
}

/**
 * Lists the interrupted sessions and resumes the one the person picks.
 * @category constructors
 */
export const resumePick = async (flags: ResumeFlags, globals: GlobalFlags): Promise<ExitCode> => {
  if (flags.session !== undefined)
    throw new BadInputError('--pick chooses the session: give --pick or --session, not both.')
  if (flags.json === true) throw new BadInputError('--pick is interactive: it cannot be given with --json.')
  const settings = await loadUserConfig(resolveDataDir(globals.dataDir))
  const safeResume = safeResumeSetting(settings.config)
  const workspace = await openDataDir(globals, 'write')
  const interrupted = interruptedFirst(await readSummaries(workspace))
  if (interrupted.length === 0) {
    say(`No interrupted session in ${workspace.dataDir.path}.`)
    return ExitCode.parked
  }
  // The list is planned with the user's and --mcp-config servers (sessions of several folders: no project file).
  const mcp = await openCommandMcp({
    dataHome: resolveDataDir(globals.dataDir),
    cwd: null,
    ...(flags.mcpConfig === undefined ? {} : { configFile: flags.mcpConfig }),
    ...(flags.timeout === undefined ? {} : { timeout: flags.timeout }),
    warn: false,
  })
  const entries = await (async () => {
    try {
      const { runtime } = composeRuntime({
        dataDir: workspace.dataDir.path,
        filesDir: workspace.filesDir,
        stores: workspace.stores,
        // Planning never calls a model.
        providerFor: providerForRuns({ kind: 'scripted', steps: [] }, { turn: [], continuation: [] }),
        safeBoundaryResumeEnabled: safeResume,
        permissionMode: 'deny',
        verbose: workspace.verbose,
        mcp,
      })
      const ids = interrupted.map((s) => s.sessionId)
      const refusals = await recoveryForPlanning(runtime, workspace, ids)
      return await pickEntries(runtime, interrupted, refusals)
    } finally {
      await mcp.close()
    }
  })()
  if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
    say('Interrupted sessions, newest first:')
    for (const entry of entries) say(`  ${pickLine(entry)}`)
    throw new BadInputError('--pick needs a terminal to choose in; resume one of these with maka resume --session ID.')
  }
  const { pickOne } = await withCiVariablesHidden(() => import('../pickPrompt.js'))
  const picked = await pickOne(
    entries.map((entry) => ({ label: pickLine(entry), value: entry.sessionId })),
    'Resume which interrupted session? (↑/↓, Enter; Esc to leave)',
  )
  if (picked === null) return ExitCode.ok
  const { resume } = await import('./resume.js')
  const { pick: _pick, ...rest } = flags
  return resume({ ...rest, session: picked }, globals)
}
