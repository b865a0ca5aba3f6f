/**
 * `maka resolve SESSION (--call ID | --operation ID) --as applied|not_applied|failed [--output TEXT]
 * [--json]`: a person records what became of a tool call the interrupted turn left open, once,
 * durably, in an adjudication run; `maka resume SESSION` then continues the turn with that record as
 * the call's response. Bad input first (exit 2, nothing written: `resolve_unavailable` naming what is
 * missing, the verdict, exactly one of `--call`/`--operation`, the output), then the runtime: the
 * recovery pass, the plan, the owner lock and the refusals (exit 3, each code with its sentence), then
 * the writes (exit 1 when one fails). The `--output` text is the call's result as the model will read
 * it: it is never printed, logged or sent to telemetry.
 */
import {
  type ResolveResult,
  type ResolveVerdict,
  type UncheckedResolveRequest,
  checkResolveRequest,
} from '@maka/executor'
import { composeRuntime, toolJournalFromEnv } from '../composeRuntime.js'
import { ExitCode } from '../ExitCode.js'
import { requireSafeId, requireSession, resolveDataDir } from '../hostInput.js'
import type { GlobalFlags, ResolveFlags } from '../CommandFlags.js'
import { providerForRuns } from '../providerChoice.js'
import { loadUserConfig, safeResumeSetting } from '../userConfig.js'
import { styleForStdout } from '../Style.js'
import { failedWriteSentence } from '../writeFailure.js'
import { openDataDir, say, sayLine } from './commandContext.js'

// No model runs in an adjudication run.
const NO_SCRIPTS = { turn: [], continuation: [] } as const

/**
 * What a verdict means for the call, in words for the person who gave it.
 * @category models
 */
export const VerdictMeanings: { readonly [V in ResolveVerdict]: string } = {
  applied: 'it took effect (the model reads it as succeeded)',
  not_applied: 'it did not take effect and will not be run again (the model reads it as an error and decides)',
  failed: 'it failed (the model reads it as an error)',
}

/**
 * The exit code of a resolve result (decision 40's table).
 * @category constructors
 */
export const exitCodeOfResolve = (result: ResolveResult): ExitCode => {
  switch (result._tag) {
    case 'Resolved':
      return ExitCode.ok
    case 'Unavailable':
    case 'Invalid':
      return ExitCode.badInput
    case 'Refused':
      return ExitCode.parked
    case 'Failed':
      return ExitCode.failed
  }
}

// The result as `--json` prints it: never the store's error object (it may name paths).
const jsonResult = (result: ResolveResult): unknown => {
  if (result._tag !== 'Failed') return result
  const { error: _error, ...rest } = result
  return rest
}

const resultLines = (result: ResolveResult, sessionId: string): ReadonlyArray<string> => {
  const style = styleForStdout()
  switch (result._tag) {
    case 'Resolved':
      return [
        `${style.green('recorded')} — call ${result.toolCallId} (operation ${result.operationId}) of session ${sessionId}: ${result.verdict}, ${VerdictMeanings[result.verdict]}.`,
        `adjudication run ${result.targetRunId} of source run ${result.sourceRunId}; nothing was run.`,
        `next: maka resume --session ${sessionId}`,
      ]
    case 'Refused': {
      const lines = [
        `${style.yellow('refused')} — nothing was recorded:`,
        ...result.codes.map((code, i) => `- ${result.messages[i] ?? code} ${style.dim(`(${code})`)}`),
      ]
      const operations = (result.detail as { readonly operations?: ReadonlyArray<Record<string, string>> } | undefined)
        ?.operations
      for (const op of operations ?? []) {
        lines.push(
          `  operation ${op['operationId'] ?? '?'}: ${op['toolName'] ?? '?'} (call ${op['toolCallId'] ?? '?'}, run ${op['runId'] ?? '?'})`,
        )
      }
      if (result.codes.includes('resolve_call_ambiguous')) {
        lines.push(`next: maka resolve ${sessionId} --operation ID --as …, with one of the operations above`)
      }
      return lines
    }
    case 'Unavailable':
    case 'Invalid':
      return [result.message]
    case 'Failed':
      return [`${style.red('failed')} at ${result.stage}: ${result.message}`]
  }
}

/**
 * Records a person's verdict on one open tool call.
 * @category constructors
 */
export const resolve = async (sessionId: string, flags: ResolveFlags, globals: GlobalFlags): Promise<ExitCode> => {
  requireSafeId('session', sessionId)
  const json = flags.json === true
  const settings = await loadUserConfig(resolveDataDir(globals.dataDir))
  const safeResume = safeResumeSetting(settings.config)
  const toolJournal = toolJournalFromEnv()
  // Opening the store reads nothing and writes nothing; its durability is the third condition.
  const workspace = await openDataDir(globals, 'read')
  const request: UncheckedResolveRequest = {
    sessionId,
    target: { callId: flags.call, operationId: flags.operation },
    verdict: flags.as ?? '',
    ...(flags.output === undefined ? {} : { output: flags.output }),
    actor: 'cli',
  }
  const checked = checkResolveRequest(request, {
    safeBoundaryResumeEnabled: safeResume,
    toolJournal,
    durableAppend: workspace.stores.capabilities.durableAppend,
  })
  const report = (result: ResolveResult): ExitCode => {
    const code = exitCodeOfResolve(result)
    if (json) sayLine({ type: 'result', command: 'resolve', sessionId, result: jsonResult(result), exitCode: code })
    else if (code === ExitCode.badInput || code === ExitCode.failed) {
      const failed = result._tag === 'Failed' ? failedWriteSentence(result.error as never) : null
      for (const line of resultLines(result, sessionId)) process.stderr.write(`maka: ${line}\n`)
      if (failed !== null) process.stderr.write(`maka: ${failed}; recovery will close the adjudication run.\n`)
    } else for (const line of resultLines(result, sessionId)) say(line)
    return code
  }
  if (checked._tag === 'Left') return report(checked.left)
  const checkedRequest = checked.right
  await requireSession(workspace.stores, workspace.dataDir, sessionId)

  const { runtime } = composeRuntime({
    dataDir: workspace.dataDir.path,
    filesDir: workspace.filesDir,
    stores: workspace.stores,
    toolJournal,
    providerFor: providerForRuns({ kind: 'scripted', steps: null }, NO_SCRIPTS),
    safeBoundaryResumeEnabled: safeResume,
    permissionMode: 'deny',
    verbose: workspace.verbose,
  })
  // The recovery pass, the plan, the owner lock, the refusals and the writes.
  return report(await runtime.resolve(checkedRequest))
}
