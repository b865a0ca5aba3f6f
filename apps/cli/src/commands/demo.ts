/**
 * `maka demo`: the crash drill of `@maka/demo` in a scratch data dir and workspace, narrated. A
 * child process (`maka __demo-child`) runs a scripted turn and is killed with SIGKILL at `--at`;
 * then this process recovers, plans, executes the continuation and reads the lineage, each step
 * judged against the contract. This module checks the flags, starts the child and renders each step
 * as it happens (or the whole report as JSON); exit 0 iff every step behaved.
 */
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describeCode } from '@maka/events'
import { type DemoDetail, type Lineage, type LineageRun, runDemo } from '@maka/demo'
import { DEMO_SCRIPT } from '@maka/providers'
import { composeRuntime } from '../composeRuntime.js'
import { type EventSummary, formatSummary, summarizeEvent } from '../eventSummary.js'
import { BadInputError, ExitCode } from '../ExitCode.js'
import { checkDataDir, resolveDataDir } from '../hostInput.js'
import type { DemoFlags, GlobalFlags } from '../CommandFlags.js'
import { requireProviderChoice } from '../providerChoice.js'
import { continuationResultLines, planLines, recoveryLine } from '../reportLines.js'
import { type Style, makeStyle, styleForStdout } from '../Style.js'

/**
 * One numbered step of the demo, with the lines it printed, as `--json` reports it.
 * @category models
 */
export interface DemoStep {
  readonly n: number
  readonly title: string
  readonly expected: string
  readonly ok: boolean
  readonly lines: ReadonlyArray<string>
}

const childEntry = (): string => fileURLToPath(new URL('../bin.cjs', import.meta.url))

const lineageLines = (lineage: Lineage, style: Style): ReadonlyArray<string> => {
  const describe = (run: LineageRun) =>
    `${style.bold(run.runId)} ${run.kind} ${run.status}${run.failureClass === undefined ? '' : ` (${run.failureClass})`}, ${run.rows} rows`
  const lines = [`session ${lineage.sessionId}`]
  if (lineage.source !== null) lines.push(`● ${describe(lineage.source)}`)
  if (lineage.continuation !== null) {
    const pin = lineage.continuation.continuationSource
    lines.push(
      `└─ ${describe(lineage.continuation)}, continues ${pin?.sourceRunId ?? '?'} @ ${pin?.sourceRuntimeEventHighWater ?? '?'}`,
    )
  } else {
    lines.push('(no continuation run)')
  }
  lines.push(lineage.claim === null ? 'no claim file' : `claim ${lineage.claim.path} → ${lineage.claim.targetRunId}`)
  return lines
}

const detailLines = (detail: DemoDetail<EventSummary>, style: Style): ReadonlyArray<string> => {
  switch (detail.kind) {
    case 'note':
      return [detail.text]
    case 'childEvent':
      return [`│ ${formatSummary(detail.summary)}`]
    case 'event':
      return [`│ ${formatSummary(summarizeEvent(detail.event))}`]
    case 'recovery':
      return [recoveryLine(detail.action)]
    case 'plan':
      return planLines(detail.plan, style)
    case 'result':
      return continuationResultLines(detail.result, style)
    case 'parkReason':
      return [`- ${describeCode(detail.code)} ${style.dim(`(${detail.code})`)}`]
    case 'lineage':
      return lineageLines(detail.lineage, style)
    case 'check':
      return [`${detail.ok ? style.green('✓') : style.red('✗')} ${detail.what}`]
  }
}

/**
 * Runs the demo.
 * @category constructors
 */
export const demo = async (flags: DemoFlags, globals: GlobalFlags): Promise<ExitCode> => {
  const json = flags.json === true
  const style = json ? makeStyle(false) : styleForStdout()
  const verbose = globals.verbose === true
  // Every check of the input before anything is created.
  if (globals.store !== undefined) {
    throw new BadInputError('maka demo shows the JSONL files of its own data dir and never takes --store.')
  }
  const choice = await requireProviderChoice(flags.script === undefined ? {} : { script: flags.script })
  const script = choice.kind === 'scripted' && choice.steps !== null ? choice.steps : DEMO_SCRIPT
  const builtin = choice.kind === 'scripted' && choice.steps === null
  const explicitDataDir = globals.dataDir === undefined ? null : resolveDataDir(globals.dataDir)
  if (explicitDataDir !== null) await checkDataDir(explicitDataDir, 'write')

  const steps: Array<DemoStep> = []
  const out = (line: string) => {
    if (!json) process.stdout.write(`${line}\n`)
  }
  let current: Array<string> | null = null

  const report = await runDemo<EventSummary>(
    { at: flags.at, script, builtin, dataDir: explicitDataDir, keep: flags.keep === true },
    {
      child: ({ dataDir, sessionId, cwd, at }) => ({
        command: process.execPath,
        args: [
          childEntry(),
          '--data-dir',
          dataDir,
          ...(verbose ? ['--verbose'] : []),
          '__demo-child',
          '--session',
          sessionId,
          '--cwd',
          cwd,
          '--at',
          at,
          ...(flags.script === undefined ? [] : ['--script', resolve(flags.script)]),
        ],
      }),
      compose: (runtime) => composeRuntime({ ...runtime, verbose }),
      onStart: ({ dataDir, workspace, sessionId }) => {
        out(style.bold('maka demo: crash an agent turn, recover, and continue it from a safe boundary'))
        out(
          style.dim(
            'Safe-boundary resume is forced on for this demo’s own runtime (MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1).',
          ),
        )
        out(`data dir   ${dataDir}`)
        out(`workspace  ${workspace}`)
        out(`session    ${sessionId}`)
      },
      onStepStart: ({ n, title }) => {
        current = []
        out(`\n${style.bold(`${n}. ${title}`)}`)
      },
      onDetail: (detail) => {
        for (const line of detailLines(detail, style)) {
          current?.push(line)
          out(`   ${line}`)
        }
      },
      onStepEnd: ({ n, title, expected, ok }) => {
        steps.push({ n, title, expected, ok, lines: current ?? [] })
        out(`   ${ok ? style.green('✓') : style.red('✗')} ${ok ? expected : `expected: ${expected}`}`)
        current = null
      },
    },
  )

  const { ok, dataDir, workspace, kept, sessionId, sourceRunId, plan, result, lineage } = report
  if (json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          ok,
          at: flags.at,
          safeBoundaryResumeForced: true,
          dataDir,
          workspace,
          kept,
          sessionId,
          sourceRunId,
          steps,
          plan,
          result,
          lineage,
        },
        null,
        2,
      )}\n`,
    )
  } else {
    const failed = steps.find((s) => !s.ok)
    out('')
    out(
      failed === undefined
        ? style.green(
            flags.at === 'after_function_call'
              ? report.plan?.disposition === 'park'
                ? 'Every step behaved as the contract says: the unsafe boundary was parked, not resumed.'
                : 'Every step behaved as the contract says: the call that never started was run again, once.'
              : 'Every step behaved as the contract says.',
          )
        : style.red(`Step ${failed.n} did not behave as the contract says.`),
    )
    out(
      kept
        ? `Kept: ${dataDir} and ${workspace}`
        : style.dim('Scratch directories removed (use --keep to inspect them).'),
    )
  }
  return ok ? ExitCode.ok : ExitCode.failed
}
