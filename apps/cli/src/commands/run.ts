/**
 * `maka run [--session ID] [--cwd DIR] "prompt"`: startup recovery, then one headless turn whose
 * committed events are streamed to stdout one line each (`--json`: one JSON object each, then a
 * result object). Exit 0 completed, 130/143 cancelled by SIGINT/SIGTERM, 1 otherwise. Without
 * `--yes`, tool calls that change the workspace are denied: recorded in the ledger and shown as denied.
 */
import type { TurnResult } from '@maka/executor'
import { DEMO_SCRIPT } from '@maka/providers'
import { composeRuntime } from '../composeRuntime.js'
import { openCommandMcp } from '../commandMcp.js'
import { deniedSentence, makeEventNarrator } from '../eventSummary.js'
import { type InterruptSignal, exitCodeOfSignal, interruptedLine, trapInterrupts } from '../interrupts.js'
import { BadInputError, ExitCode } from '../ExitCode.js'
import { requireDirectory, requireSafeId, resolveDataDir } from '../hostInput.js'
import type { GlobalFlags, RunFlags } from '../CommandFlags.js'
import { providerForRuns, requireProviderFlags } from '../providerChoice.js'
import { recordedSetupOf, resolveTurnSetup } from '../sessionSetup.js'
import { loadUserConfig, safeResumeOffHint, safeResumeSetting } from '../userConfig.js'
import { styleForStdout } from '../Style.js'
import { failedWriteSentence } from '../writeFailure.js'
import {
  announcedBy,
  eventPrinter,
  liveEventPrinter,
  openDataDir,
  retryLaterSentence,
  say,
  sayLine,
  startupRecovery,
} from './commandContext.js'

/**
 * Runs one turn.
 * @category constructors
 */
export const run = async (prompt: string, flags: RunFlags, globals: GlobalFlags): Promise<ExitCode> => {
  if (flags.session !== undefined) requireSafeId('session', flags.session)
  if (prompt.trim() === '') throw new BadInputError('The prompt is empty.')
  requireProviderFlags(flags)
  const settings = await loadUserConfig(resolveDataDir(globals.dataDir))
  const cwd = await requireDirectory(flags.cwd ?? process.cwd())
  const { dataDir, filesDir, stores, note, verbose } = await openDataDir(globals, 'write')
  // A session keeps the setup its latest run recorded unless a flag says otherwise (decision 186).
  const recorded = flags.session !== undefined && dataDir.exists ? await recordedSetupOf(stores, flags.session) : null
  const setup = await resolveTurnSetup({ flags, settings, recorded, canAsk: false })
  const safeResume = safeResumeSetting(settings.config)

  const style = styleForStdout()
  const json = flags.json === true
  const narrator = makeEventNarrator({ fullText: json })
  // The servers of the session's folder start now and stop when the command ends.
  const mcp = await openCommandMcp({
    dataHome: resolveDataDir(globals.dataDir),
    cwd: cwd,
    ...(flags.mcpConfig === undefined ? {} : { configFile: flags.mcpConfig }),
    ...(flags.timeout === undefined ? {} : { timeout: flags.timeout }),
  })
  const { runtime } = composeRuntime({
    dataDir: dataDir.path,
    filesDir,
    stores,
    providerFor: providerForRuns(setup.choice, { turn: DEMO_SCRIPT, continuation: [] }),
    safeBoundaryResumeEnabled: safeResume,
    permissionMode: setup.permissionMode,
    verbose,
    // Text mode streams the model's words and shows what each tool ran and printed; --json keeps its stream.
    observer: announcedBy(() => setup.line, json ? eventPrinter(narrator, true) : liveEventPrinter(narrator)),

    mcp,
  })
  const trap = trapInterrupts({ cancel: () => runtime.cancel() })
  try {
    // A new session has nothing to recover; an existing one is recovered before its turn.
    await startupRecovery(runtime, note, flags.session === undefined ? [] : [flags.session])
    const result = await runtime.runTurn({
      cwd,
      prompt,
      ...(flags.session === undefined ? {} : { sessionId: flags.session }),
    })
    const signal = trap.received()
    const code = exitCodeOfTurn(result, signal)
    const denied = narrator.denied()
    if (result._tag === 'Finished' && (code === ExitCode.interrupted || code === ExitCode.terminated)) {
      process.stderr.write(`${interruptedLine(result.runId)}\n`)
    }
    // Every way a turn does not complete gets its one stderr line, whatever stdout's format.
    const problem = problemLine(result)
    if (problem !== null) process.stderr.write(`${problem}\n`)
    // Once per command, after a turn that ran: a refused turn keeps its one stderr line.
    if (!safeResume && result._tag === 'Finished') process.stderr.write(`${safeResumeOffHint}\n`)
    if (json) {
      sayLine({
        type: 'result',
        command: 'run',
        ...turnResultJson(result),
        deniedToolCalls: denied.length,
        exitCode: code,
      })
      return code
    }
    if (result._tag === 'Finished') {
      note(`run sessionId=${result.sessionId} runId=${result.runId} status=${result.status}`)
      const sentence = deniedSentence(denied)
      say(
        `${result.status === 'completed' ? style.green(result.status) : style.red(result.status)}${
          result.failureClass === undefined ? '' : ` (${result.failureClass})`
        } — session ${result.sessionId}, run ${result.runId}`,
      )
      if (sentence !== null) say(style.yellow(`${sentence} Add --yes to allow tools that change the workspace.`))
    }
    return code
  } finally {
    trap.dispose()
    await mcp.close()
  }
}

// The stderr line of a turn that failed, was refused or stopped on a failed write; null when it completed.
const problemLine = (result: TurnResult): string | null => {
  switch (result._tag) {
    case 'Finished':
      return result.failureMessage === undefined
        ? null
        : `maka: ${result.failureMessage}${result.retryLater === true ? ` ${retryLaterSentence(result.sessionId)}` : ''}`
    case 'Refused': {
      const sentence = failedWriteSentence(result.error)
      return sentence === null
        ? `maka: the turn was refused (${result.code}): ${result.message}`
        : `maka: ${sentence}; the turn did not start.`
    }
    case 'Interrupted': {
      const sentence = failedWriteSentence(result.error)
      // The turn is not reported finished: its run stays open until recovery closes it.
      return sentence === null
        ? `maka: ${result.message} Session ${result.sessionId}, run ${result.runId}.`
        : `maka: ${sentence}; the run stopped (session ${result.sessionId}, run ${result.runId}) and recovery will close it.`
    }
  }
}

/**
 * The exit code of a turn: 0 completed, 130/143 cancelled by that signal, 1 otherwise.
 * @category constructors
 */
export const exitCodeOfTurn = (result: TurnResult, signal: InterruptSignal | null): ExitCode => {
  if (result._tag !== 'Finished') return ExitCode.failed
  if (result.status === 'completed') return ExitCode.ok
  if (result.status === 'cancelled' && signal !== null) return exitCodeOfSignal(signal)
  return ExitCode.failed
}

/**
 * The fields a turn adds to the `--json` result object: `status` is the run's terminal status, or
 * `refused` (nothing was run) or `stopped` (a write failed; recovery will close the run).
 * @category constructors
 */
export const turnResultJson = (result: TurnResult): Readonly<Record<string, unknown>> => {
  switch (result._tag) {
    case 'Finished': {
      const { _tag, ...rest } = result
      return rest
    }
    case 'Refused':
      return { status: 'refused', code: result.code, message: result.message }
    case 'Interrupted':
      return { status: 'stopped', sessionId: result.sessionId, runId: result.runId, message: result.message }
  }
}
