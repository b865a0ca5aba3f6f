/**
 * `maka resume plan [--session ID] [--run ID] [--json] [--no-recover]`: the startup recovery pass
 * (unless `--no-recover`), then a dry-run plan: the plan JSON of docs/contract.md §2 with `--json`, else a
 * summary with the human sentence of every reason. Exit 0 continue, 3 park (also for a data
 * directory with no session: `resume_candidate_missing`; and for a session whose repair the data
 * directory refuses: `recovery_unwritable`, with one stderr line saying what recovery would repair,
 * and nothing written). No ledger is held: planning folds each one as it streams, and the JSON
 * streams the history again from the ledgers (decision 97).
 */
import { composeRuntime } from '../composeRuntime.js'
import { type CommandMcp, openCommandMcp, sessionCwdOf } from '../commandMcp.js'
import { BadInputError, ExitCode } from '../ExitCode.js'
import { requireRun, requireSafeId, resolveDataDir } from '../hostInput.js'
import { loadUserConfig, safeResumeSetting } from '../userConfig.js'
import type { GlobalFlags, ResumePlanFlags } from '../CommandFlags.js'
import { providerForRuns } from '../providerChoice.js'
import { planLines } from '../reportLines.js'
import { styleForStdout } from '../Style.js'
import { writeOutlinedPlanJson, writePlanJson } from '../planJson.js'
import { planNoSession, planUnrecovered } from '@maka/planner'
import { openDataDir, recoveryForPlanning, say } from './commandContext.js'
import { pickSession } from './pickSession.js'

/**
 * Plans without executing.
 * @category constructors
 */
export const resumePlan = async (flags: ResumePlanFlags, globals: GlobalFlags): Promise<ExitCode> => {
  if (flags.session !== undefined) requireSafeId('session', flags.session)
  if (flags.run !== undefined) requireSafeId('run', flags.run)
  const settings = await loadUserConfig(resolveDataDir(globals.dataDir))
  const safeBoundaryResumeEnabled = safeResumeSetting(settings.config)
  const workspace = await openDataDir(globals, 'read')
  const sessionId = await pickSession(workspace, flags.session)
  if (sessionId === null) {
    // --run names a run of a session; without any session it cannot exist.
    if (flags.run !== undefined) throw new BadInputError(`There is no session in ${workspace.dataDir.path}.`)
    const plan = planNoSession(safeBoundaryResumeEnabled)
    if (flags.json === true) await writePlanJson(process.stdout, plan)
    else {
      say(`Plan for ${workspace.dataDir.path} (no sessions):`)
      for (const line of planLines(plan, styleForStdout())) say(`  ${line}`)
    }
    return ExitCode.parked
  }
  if (flags.run !== undefined) await requireRun(workspace.stores, sessionId, flags.run)
  // The plan judges the session's MCP tools by what their servers declare now: they are asked, then stopped.
  const mcp = await openCommandMcp({
    dataHome: resolveDataDir(globals.dataDir),
    cwd: await sessionCwdOf(workspace.stores, sessionId),
    ...(flags.mcpConfig === undefined ? {} : { configFile: flags.mcpConfig }),
  })
  try {
    return await planWith(mcp, sessionId)
  } finally {
    await mcp.close()
  }

  async function planWith(mcp: CommandMcp, sessionId: string): Promise<ExitCode> {
    const { runtime } = composeRuntime({
      dataDir: workspace.dataDir.path,
      filesDir: workspace.filesDir,
      stores: workspace.stores,
      // Planning never calls a model.
      providerFor: providerForRuns({ kind: 'scripted', steps: [] }, { turn: [], continuation: [] }),
      safeBoundaryResumeEnabled,
      permissionMode: 'deny',
      verbose: workspace.verbose,
      mcp,
    })
    const refusal = flags.recover
      ? (await recoveryForPlanning(runtime, workspace, [sessionId])).get(sessionId)
      : undefined
    if (refusal !== undefined) {
      // Recovery could not bring the session to a state worth planning from: its plan is early exit 1a.
      const plan = planUnrecovered({
        safeBoundaryResumeEnabled,
        refusal,
        ...(flags.run === undefined ? {} : { runId: flags.run }),
      })
      if (flags.json === true) await writePlanJson(process.stdout, plan)
      else {
        say(`Plan for session ${sessionId}:`)
        for (const line of planLines(plan, styleForStdout())) say(`  ${line}`)
      }
      return ExitCode.parked
    }
    // Planning folds each ledger as it streams; the JSON reads the history again as it prints it.
    const outline = await runtime.planOutline({ sessionId, ...(flags.run === undefined ? {} : { runId: flags.run }) })
    const { plan } = outline
    if (flags.json === true) await writeOutlinedPlanJson(process.stdout, outline)
    else {
      say(`Plan for session ${sessionId}:`)
      for (const line of planLines(plan, styleForStdout(), sessionId)) say(`  ${line}`)
    }
    return plan.disposition === 'continue' ? ExitCode.ok : ExitCode.parked
  }
}
