/**
 * The hidden `maka __chaos-child` command: a child that `maka chaos` kills at a crash point. With
 * `--mode turn` it runs one scripted turn, with `--mode resume` it does what `maka resume --yes` does
 * (startup recovery, plan, execute). The nth time the executor's `onCrashPoint` hook reaches
 * `--crash-at`, it prints `chaos-at:<point>` and hangs, holding the session, until the parent sends
 * SIGKILL. Children that are not to stop at a crash point are the real `maka run` and `maka resume`.
 */
import { CRASH_LINE_PREFIX } from '@maka/chaos'
import { composeRuntime } from '../composeRuntime.js'
import { ExitCode } from '../ExitCode.js'
import type { ChaosChildFlags, GlobalFlags } from '../CommandFlags.js'
import { providerForRuns, readProviderChoice } from '../providerChoice.js'
import { openDataDir, startupRecovery } from './commandContext.js'

// Far beyond the parent's ceiling for one child.
const HANG_LIMIT_MS = 300_000

/**
 * Runs the turn or the resume that will be killed.
 * @category constructors
 */
export const chaosChild = async (flags: ChaosChildFlags, globals: GlobalFlags): Promise<ExitCode> => {
  const workspace = await openDataDir(globals, 'write')
  const choice = await readProviderChoice({ script: flags.script })
  const nth = Number(flags.crashNth)
  let seen = 0
  const { runtime } = composeRuntime({
    dataDir: workspace.dataDir.path,
    stores: workspace.stores,
    providerFor: providerForRuns(choice, { turn: [], continuation: [] }),
    // Like `maka demo`, chaos forces the flag on: turns must be resumable and resumes must execute.
    safeBoundaryResumeEnabled: true,
    permissionMode: 'allow',
    verbose: workspace.verbose,
    onCrashPoint: (point) => {
      if (point !== flags.crashAt) return
      seen += 1
      if (seen !== nth) return
      process.stdout.write(`${CRASH_LINE_PREFIX}${point}\n`)
      // Should the parent die first, its end of our stdin closes and we leave rather than hang.
      process.stdin.on('end', () => process.exit(ExitCode.failed))
      process.stdin.resume()
      return new Promise<void>(() => {
        setTimeout(() => process.exit(ExitCode.failed), HANG_LIMIT_MS)
      })
    },
  })
  if (flags.mode === 'turn') {
    const result = await runtime.runTurn({ sessionId: flags.session, cwd: flags.cwd, prompt: 'Run the chaos script.' })
    return result._tag === 'Finished' && result.status === 'completed' ? ExitCode.ok : ExitCode.failed
  }
  await startupRecovery(runtime, workspace.note, [flags.session])
  const result = await runtime.resume({ sessionId: flags.session })
  return result._tag === 'Finished' ? (result.status === 'completed' ? ExitCode.ok : ExitCode.failed) : ExitCode.parked
}
