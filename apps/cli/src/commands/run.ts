/**
 * `maka run [--session ID] [--cwd DIR] "prompt"`: startup recovery, then one headless turn whose
 * committed events are streamed to stdout one line each. Exit 0 completed, 1 otherwise. Without
 * `--yes`, tool calls that change the workspace are denied (recorded as denied in the ledger).
 */
import { DEMO_SCRIPT } from '@maka/providers'
import { composeRuntime } from '../composeRuntime.js'
import { formatSummary, summarizeEvent } from '../eventSummary.js'
import { BadInputError, ExitCode } from '../ExitCode.js'
import { requireDirectory, requireSafeId, safeBoundaryResumeFromEnv } from '../hostInput.js'
import type { GlobalFlags, RunFlags } from '../program.js'
import { providerForRuns, readProviderChoice } from '../providerChoice.js'
import { styleForStdout } from '../Style.js'
import { openDataDir, say, startupRecovery } from './commandContext.js'

/**
 * Runs one turn.
 * @category constructors
 */
export const run = async (prompt: string, flags: RunFlags, globals: GlobalFlags): Promise<ExitCode> => {
  if (flags.session !== undefined) requireSafeId('session', flags.session)
  if (prompt.trim() === '') throw new BadInputError('The prompt is empty.')
  const cwd = await requireDirectory(flags.cwd ?? process.cwd())
  const { dataDir, note, verbose } = await openDataDir(globals, 'write')
  const choice = await readProviderChoice(flags)
  const style = styleForStdout()
  const { runtime } = composeRuntime({
    dataDir: dataDir.path,
    providerFor: providerForRuns(choice, { turn: DEMO_SCRIPT, continuation: [] }),
    safeBoundaryResumeEnabled: safeBoundaryResumeFromEnv(),
    permissionMode: flags.yes === true ? 'allow' : 'deny',
    verbose,
    observer: { onEvent: (event) => say(formatSummary(summarizeEvent(event))) },
  })
  // A new session has nothing to recover; an existing one is recovered before its turn.
  await startupRecovery(runtime, note, flags.session === undefined ? [] : [flags.session])
  const result = await runtime.runTurn({
    cwd,
    prompt,
    ...(flags.session === undefined ? {} : { sessionId: flags.session }),
  })
  switch (result._tag) {
    case 'Finished':
      note(`run sessionId=${result.sessionId} runId=${result.runId} status=${result.status}`)
      say(
        `${result.status === 'completed' ? style.green(result.status) : style.red(result.status)}${
          result.failureClass === undefined ? '' : ` (${result.failureClass})`
        } — session ${result.sessionId}, run ${result.runId}`,
      )
      return result.status === 'completed' ? ExitCode.ok : ExitCode.failed
    case 'Refused':
      process.stderr.write(`maka: the turn was refused (${result.code}): ${result.message}\n`)
      return ExitCode.failed
    case 'Interrupted':
      process.stderr.write(`maka: ${result.message} Session ${result.sessionId}, run ${result.runId}.\n`)
      return ExitCode.failed
  }
}
