/**
 * The hidden `maka __demo-child` command: the process `maka demo` kills. It runs one scripted turn
 * with safe-boundary resume on and, at the requested crash point (reached through the executor's
 * `onCrashPoint` hook), prints a readiness line and hangs until the parent sends SIGKILL. Its stdout
 * is `@maka/demo`'s JSON-lines protocol (`DemoChildMessage`): `event` (a summary, never tool args or
 * results), `ready`, and `finished` if the turn ended without reaching the crash point.
 */
import { DEMO_PROMPT, type DemoChildMessage } from '@maka/demo'
import { DEMO_SCRIPT } from '@maka/providers'
import { composeRuntime } from '../composeRuntime.js'
import { type EventSummary, summarizeEvent } from '../eventSummary.js'
import { ExitCode } from '../ExitCode.js'
import { resolveDataDir } from '../hostInput.js'
import type { DemoChildFlags, GlobalFlags } from '../CommandFlags.js'
import { providerForRuns, requireProviderChoice } from '../providerChoice.js'

// Far beyond the parent's own wait for the readiness line.
const HANG_LIMIT_MS = 300_000

const emit = (message: DemoChildMessage<EventSummary>): void => {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}

/**
 * Runs the turn that will be killed.
 * @category constructors
 */
export const demoChild = async (flags: DemoChildFlags, globals: GlobalFlags): Promise<ExitCode> => {
  const choice = await requireProviderChoice(flags.script === undefined ? {} : { script: flags.script })
  let reached = false
  const { runtime } = composeRuntime({
    dataDir: resolveDataDir(globals.dataDir),
    providerFor: providerForRuns(choice, { turn: DEMO_SCRIPT, continuation: [] }),
    // The demo forces the flag on: the turn must record its workspace identity to be resumable.
    safeBoundaryResumeEnabled: true,
    permissionMode: 'allow',
    verbose: globals.verbose === true,
    observer: { onEvent: (event) => emit({ type: 'event', runId: event.runId, line: summarizeEvent(event) }) },
    onCrashPoint: (point, { runId }) => {
      if (reached || point !== flags.at) return
      reached = true
      emit({ type: 'ready', point, runId, pid: process.pid })
      // Hang here, holding the session, until the parent kills this process. Should the parent die
      // first, its end of our stdin closes and we leave rather than hang forever.
      process.stdin.on('end', () => process.exit(ExitCode.failed))
      process.stdin.resume()
      return new Promise<void>(() => {
        setTimeout(() => process.exit(ExitCode.failed), HANG_LIMIT_MS)
      })
    },
  })
  const result = await runtime.runTurn({ sessionId: flags.session, cwd: flags.cwd, prompt: DEMO_PROMPT })
  emit({ type: 'finished', outcome: result._tag === 'Finished' ? result.status : result._tag })
  return ExitCode.failed
}
