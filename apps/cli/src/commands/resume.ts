/**
 * `maka resume [--session ID] [--json]`: the startup recovery pass, a plan of the latest safe
 * boundary, and its execution, with the continuation's committed events streamed to stdout. Exit 0
 * completed, 3 parked or rejected (every reason printed with its sentence), 1 failed.
 */
import type { ContinuationResult } from '@maka/executor'
import { composeRuntime } from '../composeRuntime.js'
import { type EventSummary, formatSummary, summarizeEvent } from '../eventSummary.js'
import { ExitCode } from '../ExitCode.js'
import { requireSafeId, safeBoundaryResumeFromEnv } from '../hostInput.js'
import type { GlobalFlags, ResumeFlags } from '../program.js'
import { providerForRuns, readProviderChoice } from '../providerChoice.js'
import { continuationResultLines, planLines } from '../reportLines.js'
import { styleForStdout } from '../Style.js'
import { writePlanJson } from '../planJson.js'
import { openDataDir, say, startupRecovery } from './commandContext.js'
import { pickSession } from './pickSession.js'

/**
 * The exit code of a continuation result.
 * @category constructors
 */
export const exitCodeOf = (result: ContinuationResult): ExitCode => {
  switch (result._tag) {
    case 'Finished':
      return result.status === 'completed' ? ExitCode.ok : ExitCode.failed
    case 'Parked':
    case 'Rejected':
      return ExitCode.parked
    case 'Failed':
      return ExitCode.failed
  }
}

/**
 * Resumes the latest safe boundary of a session.
 * @category constructors
 */
export const resume = async (flags: ResumeFlags, globals: GlobalFlags): Promise<ExitCode> => {
  if (flags.session !== undefined) requireSafeId('session', flags.session)
  const workspace = await openDataDir(globals, 'write')
  const sessionId = await pickSession(workspace, flags.session)
  const choice = await readProviderChoice(flags)
  const json = flags.json === true
  const style = styleForStdout()
  const events: Array<EventSummary> = []
  const { runtime } = composeRuntime({
    dataDir: workspace.dataDir.path,
    providerFor: providerForRuns(choice, { turn: [], continuation: [] }),
    safeBoundaryResumeEnabled: safeBoundaryResumeFromEnv(),
    permissionMode: flags.yes === true ? 'allow' : 'deny',
    verbose: workspace.verbose,
    observer: {
      onEvent: (event) => {
        const summary = summarizeEvent(event)
        events.push(summary)
        if (!json) say(formatSummary(summary))
      },
    },
  })
  await startupRecovery(runtime, workspace.note, [sessionId])
  const plan = await runtime.plan({ sessionId })
  if (plan.disposition !== 'continue') {
    if (json) await writePlanJson(process.stdout, { sessionId, plan, result: { _tag: 'Parked' }, events })
    else {
      say(`Cannot resume session ${sessionId}:`)
      for (const line of planLines(plan, style)) say(`  ${line}`)
    }
    return ExitCode.parked
  }
  if (!json) {
    say(
      `Resuming session ${sessionId} from the latest safe boundary: run ${plan.sourceRunId ?? '?'} at high-water ${plan.sourceRuntimeEventHighWater ?? '?'}.`,
    )
  }
  const result = await runtime.execute(plan)
  if (json)
    await writePlanJson(process.stdout, {
      sessionId,
      plan,
      result: result._tag === 'Parked' ? { _tag: 'Parked' } : result,
      events,
    })
  else for (const line of continuationResultLines(result, style)) say(line)
  return exitCodeOf(result)
}
