/**
 * The hidden `maka __chaos-child` command: a child that `maka chaos` kills at a crash point, or
 * starts on a cue. With `--mode turn` it runs one scripted turn, with `--mode resume` it does what
 * `maka resume --yes` does (startup recovery, plan, execute), with `--mode recover` what `maka
 * recover` does (the recovery pass over every session). The nth time the executor's `onCrashPoint`
 * hook reaches `--crash-at`, it prints `chaos-at:<point>` and hangs, holding the session, until the
 * parent sends SIGKILL. With `--cue` it prints `chaos-ready` once its store is open and its runtime
 * built, and touches the session only after a line on stdin: the driver cues a whole storm at once
 * (or within a few milliseconds), so its children race for one lock within microseconds or
 * milliseconds of each other rather than across their start-up.
 * Children that neither stop at a crash point nor wait for a cue are the real `maka run`, `maka
 * resume` and `maka recover`.
 */
import { CRASH_LINE_PREFIX, READY_LINE } from '@maka/chaos'
import { composeRuntime } from '../composeRuntime.js'
import { ExitCode } from '../ExitCode.js'
import type { ChaosChildFlags, GlobalFlags } from '../CommandFlags.js'
import { providerForRuns, requireProviderChoice } from '../providerChoice.js'
import { openDataDir, startupRecovery } from './commandContext.js'

// Far beyond the parent's ceiling for one child.
const HANG_LIMIT_MS = 300_000

// Should the parent die first, its end of our stdin closes and we leave rather than hang.
const leaveWithParent = () => {
  process.stdin.on('end', () => process.exit(ExitCode.failed))
  process.stdin.resume()
}

const waitForCue = (): Promise<void> =>
  new Promise((resolve) => {
    process.stdout.write(`${READY_LINE}\n`)
    process.stdin.once('data', () => {
      // Paused, stdin no longer keeps this process alive once its work is done.
      process.stdin.pause()
      resolve()
    })
    leaveWithParent()
  })

/**
 * Runs the turn, resume or recovery that will be killed or cued.
 * @category constructors
 */
export const chaosChild = async (flags: ChaosChildFlags, globals: GlobalFlags): Promise<ExitCode> => {
  const workspace = await openDataDir(globals, 'write')
  const choice = await requireProviderChoice({ script: flags.script })
  const nth = Number(flags.crashNth ?? '1')
  let seen = 0
  const { runtime } = composeRuntime({
    dataDir: workspace.dataDir.path,
    filesDir: workspace.filesDir,
    stores: workspace.stores,
    providerFor: providerForRuns(choice, { turn: [], continuation: [] }),
    // Like `maka demo`, chaos forces the flag on: turns must be resumable and resumes must execute.
    safeBoundaryResumeEnabled: true,
    permissionMode: 'allow',
    verbose: workspace.verbose,
    onCrashPoint: (point) => {
      if (flags.crashAt === undefined || point !== flags.crashAt) return
      seen += 1
      if (seen !== nth) return
      process.stdout.write(`${CRASH_LINE_PREFIX}${point}\n`)
      leaveWithParent()
      return new Promise<void>(() => {
        setTimeout(() => process.exit(ExitCode.failed), HANG_LIMIT_MS)
      })
    },
  })
  if (flags.cue === true) await waitForCue()
  if (flags.mode === 'turn') {
    const result = await runtime.runTurn({ sessionId: flags.session, cwd: flags.cwd, prompt: 'Run the chaos script.' })
    return result._tag === 'Finished' && result.status === 'completed' ? ExitCode.ok : ExitCode.failed
  }
  if (flags.mode === 'recover') {
    await runtime.recover()
    return ExitCode.ok
  }
  await startupRecovery(runtime, workspace.note, [flags.session])
  const result = await runtime.resume({ sessionId: flags.session })
  return result._tag === 'Finished' ? (result.status === 'completed' ? ExitCode.ok : ExitCode.failed) : ExitCode.parked
}
