/**
 * `maka resume [--session ID] [--json]`: the startup recovery pass, a plan of the latest safe
 * boundary, and its execution, with the continuation's committed events streamed to stdout
 * (`--json`: newline-delimited objects, see apps/cli/README.md). Exit 0 completed, 3 parked or
 * rejected (every reason printed with its sentence; also when there is no session at all, and
 * `recovery_unwritable` when the data directory refuses the session's repair: nothing is written),
 * 1 failed, 130/143 cancelled by SIGINT/SIGTERM.
 */
import type { ContinuationResult, WaitingOperation } from '@maka/executor'
import { planNoSession } from '@maka/planner'
import { composeRuntime } from '../composeRuntime.js'
import { openCommandMcp, sessionCwdOf } from '../commandMcp.js'
import { deniedSentence, makeEventNarrator } from '../eventSummary.js'
import { type InterruptSignal, exitCodeOfSignal, interruptedLine, trapInterrupts } from '../interrupts.js'
import { BadInputError, ExitCode } from '../ExitCode.js'
import { requireSafeId, resolveDataDir } from '../hostInput.js'
import type { GlobalFlags, ResumeFlags } from '../CommandFlags.js'
import { requireProviderFlags, providerForRuns } from '../providerChoice.js'
import { resolvePermission, sessionContinuationResolver } from '../sessionSetup.js'
import { loadUserConfig, safeResumeSetting } from '../userConfig.js'
import { continuationResultLines, planLines } from '../reportLines.js'
import { styleForStdout } from '../Style.js'
import { writePlanJson } from '../planJson.js'
import { failedWriteSentence } from '../writeFailure.js'
import {
  announcedBy,
  eventPrinter,
  openDataDir,
  recoveryForPlanning,
  retryLaterSentence,
  say,
  sayLine,
} from './commandContext.js'
import { pickSession } from './pickSession.js'

/**
 * The progress line of a command a resume waits for: the tool, its call id and how long it has run —
 * never the command.
 * @category constructors
 */
export const waitingLine = (op: WaitingOperation): string =>
  `maka: waiting for ${op.toolName} (call ${op.toolCallId}), still running${
    op.elapsedMs === null ? '' : ` after ${Math.round(op.elapsedMs / 1000)} s`
  }; Ctrl+C stops waiting.`

const PROGRESS_EVERY_MS = 5_000

// A continuation without a script file answers from its history alone.
const NO_DEFAULT_SCRIPTS = { turn: [], continuation: [] } as const

/**
 * The exit code of a continuation result.
 * @category constructors
 */
export const exitCodeOf = (result: ContinuationResult, signal: InterruptSignal | null = null): ExitCode => {
  switch (result._tag) {
    case 'Finished':
      if (result.status === 'cancelled' && signal !== null) return exitCodeOfSignal(signal)
      return result.status === 'completed' ? ExitCode.ok : ExitCode.failed
    case 'Parked':
    case 'Rejected':
      return ExitCode.parked
    case 'Failed':
      return ExitCode.failed
    case 'ProviderUnavailable':
      return ExitCode.badInput
  }
}

/**
 * Resumes the latest safe boundary of a session.
 * @category constructors
 */
export const resume = async (flags: ResumeFlags, globals: GlobalFlags): Promise<ExitCode> => {
  if (flags.session !== undefined) requireSafeId('session', flags.session)
  requireProviderFlags(flags)
  const settings = await loadUserConfig(resolveDataDir(globals.dataDir))
  const safeResume = safeResumeSetting(settings.config)
  // A bad --permission-mode (ask: resume cannot ask) is bad input before anything is read.
  resolvePermission({ flags, settings, recorded: null, canAsk: false })
  const workspace = await openDataDir(globals, 'write')
  const sessionId = await pickSession(workspace, flags.session)
  const json = flags.json === true
  const style = styleForStdout()
  if (sessionId === null) {
    const plan = planNoSession(safeResume)
    if (json) {
      await writePlanJson(process.stdout, { type: 'plan', sessionId: null, plan }, { compact: true })
      sayLine({
        type: 'result',
        command: 'resume',
        sessionId: null,
        result: { _tag: 'Parked' },
        exitCode: ExitCode.parked,
      })
    } else {
      say('Cannot resume:')
      for (const line of planLines(plan, style)) say(`  ${line}`)
    }
    return ExitCode.parked
  }
  const narrator = makeEventNarrator({ fullText: json })
  // Which model and mode the continuation uses, said once its first row is committed.
  let setupLine: string | null = null
  // The servers of the session's folder start now and stop when the command ends.
  const mcp = await openCommandMcp({
    dataHome: resolveDataDir(globals.dataDir),
    cwd: await sessionCwdOf(workspace.stores, sessionId),
    ...(flags.mcpConfig === undefined ? {} : { configFile: flags.mcpConfig }),
    ...(flags.timeout === undefined ? {} : { timeout: flags.timeout }),
  })
  const { runtime } = composeRuntime({
    dataDir: workspace.dataDir.path,
    filesDir: workspace.filesDir,
    stores: workspace.stores,
    // No turn runs here: the continuation's model is the one the resolver reads from its source run.
    providerFor: providerForRuns({ kind: 'scripted', steps: null }, NO_DEFAULT_SCRIPTS),
    // The continuation keeps its source run's model and permission mode unless a flag says otherwise;
    // the line saying which is printed once the plan continues, before anything is written.
    resolveContinuationProvider: sessionContinuationResolver({
      flags,
      settings,
      canAsk: false,
      defaults: NO_DEFAULT_SCRIPTS,
      onSetup: (line) => {
        setupLine = line
      },
    }),
    safeBoundaryResumeEnabled: safeResume,
    permissionMode: flags.yes === true ? 'allow' : 'deny',
    verbose: workspace.verbose,
    observer: announcedBy(() => setupLine, eventPrinter(narrator, json)),

    mcp,
  })
  // Ctrl+C while waiting for a command stops the wait (nothing was written); during a run it cancels it.
  const waiting = new AbortController()
  let lastProgress = Number.NEGATIVE_INFINITY
  const trap = trapInterrupts({
    cancel: () => {
      waiting.abort()
      return runtime.cancel()
    },
  })
  try {
    // A session recovery could not repair parks at early exit 1a without being read.
    const recoveryRefusal = (await recoveryForPlanning(runtime, workspace, [sessionId])).get(sessionId)
    const result = await runtime.resume(
      {
        sessionId,
        ...(recoveryRefusal === undefined ? {} : { recoveryRefusal }),
        ...(flags.wait === false ? {} : { wait: { signal: waiting.signal } }),
      },
      {
        onWaiting: (operations) => {
          // One line at once, then one every few seconds: progress, not noise.
          const now = Date.now()
          if (now - lastProgress < PROGRESS_EVERY_MS) return
          lastProgress = now
          for (const op of operations) process.stderr.write(`${waitingLine(op)}\n`)
        },
        onPlanned: async (plan) => {
          // The plan line streams its history: a million-event plan never becomes one string.
          if (json) await writePlanJson(process.stdout, { type: 'plan', sessionId, plan }, { compact: true })
        },
        onProviderNote: (note) => {
          process.stderr.write(`maka: ${note}\n`)
        },
        onExecuting: (plan) => {
          if (json) return
          say(
            `Resuming session ${sessionId} from the latest safe boundary: run ${plan.sourceRunId ?? '?'} at high-water ${plan.sourceRuntimeEventHighWater ?? '?'}.`,
          )
        },
      },
    )
    // A model that cannot be built is bad input (exit 2, its sentence on stderr), found before the
    // owner lock and the claim: the boundary is not spent.
    if (result._tag === 'ProviderUnavailable') throw new BadInputError(result.message)
    if (result._tag === 'Parked') {
      if (json) {
        sayLine({ type: 'result', command: 'resume', sessionId, result: { _tag: 'Parked' }, exitCode: ExitCode.parked })
      } else {
        say(`Cannot resume session ${sessionId}:`)
        for (const line of planLines(result.plan, style, sessionId)) say(`  ${line}`)
      }
      return ExitCode.parked
    }
    const signal = trap.received()
    const code = exitCodeOf(result, signal)
    if (result._tag === 'Finished' && (code === ExitCode.interrupted || code === ExitCode.terminated)) {
      process.stderr.write(`${interruptedLine(result.targetRunId)}\n`)
    }
    if (result._tag === 'Finished' && result.failureMessage !== undefined) {
      const later = result.retryLater === true ? ` ${retryLaterSentence(result.sessionId)}` : ''
      process.stderr.write(`maka: ${result.failureMessage}${later}\n`)
    }
    const failedWrite = result._tag === 'Failed' ? failedWriteSentence(result.error) : null
    if (failedWrite !== null) {
      const outcome =
        result._tag === 'Failed' && result.stage === 'run'
          ? `the continuation run ${result.targetRunId} stopped and recovery will close it`
          : 'the continuation did not start'
      process.stderr.write(`maka: ${failedWrite}; ${outcome}.\n`)
    }
    if (json) {
      sayLine({
        type: 'result',
        command: 'resume',
        sessionId,
        result,
        deniedToolCalls: narrator.denied().length,
        exitCode: code,
      })
      return code
    }
    for (const line of continuationResultLines(result, style)) say(line)
    const sentence = deniedSentence(narrator.denied())
    if (sentence !== null) say(style.yellow(`${sentence} Add --yes to allow tools that change the workspace.`))
    return code
  } finally {
    trap.dispose()
    await mcp.close()
  }
}
