/**
 * `maka chaos --journal on|off` on the BUILT CLI: a few iterations of the journal's turn (tools that
 * take real time, killed at a random moment, recovered, waited for, resumed) report their kills by
 * boundary, their outcomes and the continued share, with no violation; bad combinations are exit 2.
 * Also: the bundled `maka run` runs a journal run's foreground shell under its supervisor (the
 * supervisor script ships beside the commands).
 */
import { execFile } from 'node:child_process'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  CLI,
  type CliResult,
  cliEnv,
  ledgerRows,
  removeScratch,
  scratch,
  scriptFile,
  freshTmp,
  runChaosCli,
} from './support.js'

interface JournalJson {
  readonly ok: boolean
  readonly journal: 'on' | 'off'
  readonly seed: number
  readonly iterations: number
  readonly killsByBoundary: Readonly<Record<string, number>>
  readonly killsBy: Readonly<Record<string, number>>
  readonly killed: number
  readonly notKilled: number
  readonly continued: number
  readonly continuedShare: number
  readonly killedAfterRun: number
  readonly continuedShareAfterRun: number
  readonly waited: number
  readonly parkCodes: Readonly<Record<string, number>>
  readonly parkedByBoundary: Readonly<Record<string, number>>
  readonly violations: ReadonlyArray<unknown>
  readonly root: string | null
  readonly iterationReports: ReadonlyArray<{
    readonly iteration: number
    readonly seed: number
    readonly schedule: ReadonlyArray<string>
    readonly boundary: string | null
    readonly killedBy: string | null
    readonly outcome: { readonly kind: 'not_killed' | 'continued' | 'parked'; readonly codes?: ReadonlyArray<string> }
  }>
}

// A loaded 2-core machine may take minutes for a few 5 s turns; the test waits on the process, not on a clock.
const CHAOS_TIMEOUT_MS = 600_000

const runChaos = (args: ReadonlyArray<string>, tmp: string): Promise<CliResult> =>
  runChaosCli(args, tmp, CHAOS_TIMEOUT_MS)

const newTmp = (): Promise<string> => freshTmp('maka-cli-chaos-journal-')

const sum = (counts: Readonly<Record<string, number>>): number => Object.values(counts).reduce((a, b) => a + b, 0)

const BOUNDARY =
  /^(before_run|after_user_text|after_terminal_event|(after_function_call|after_tool_dispatch|after_tool_response):(list_dir|shell|read_file|write_file))$/

describe('maka chaos --journal', { timeout: CHAOS_TIMEOUT_MS }, () => {
  afterAll(removeScratch)

  it.for(['on', 'off'] as const)(
    '--journal %s: 6 iterations report kills by boundary, outcomes and the continued share, with no violation',
    async (journal) => {
      const tmp = await newTmp()
      const result = await runChaos(['chaos', '--journal', journal, '--iterations', '6', '--seed', '7', '--json'], tmp)
      expect(result.stderr).toBe('')
      const summary = JSON.parse(result.stdout) as JournalJson
      expect(summary.violations).toEqual([])
      expect(result.code).toBe(0)
      expect(summary).toMatchObject({ ok: true, journal, seed: 7, iterations: 6, root: null })
      expect(summary.iterationReports).toHaveLength(6)
      expect(summary.killed + summary.notKilled).toBe(6)
      expect(sum(summary.killsByBoundary)).toBe(summary.killed)
      expect(sum(summary.killsBy)).toBe(summary.killed)
      for (const by of Object.keys(summary.killsBy)) expect(['random_moment', 'after_tool_side_effect']).toContain(by)
      expect(summary.continued).toBeLessThanOrEqual(summary.killed)
      expect(summary.continuedShare).toBe(summary.killed === 0 ? 0 : summary.continued / summary.killed)
      expect(summary.killedAfterRun).toBe(summary.killed - (summary.killsByBoundary['before_run'] ?? 0))
      const parked = summary.iterationReports.filter((r) => r.outcome.kind === 'parked')
      expect(sum(summary.parkedByBoundary)).toBe(parked.length)
      expect(summary.killed - summary.continued).toBe(parked.length)
      for (const report of summary.iterationReports) {
        expect(report.schedule[0]).toBe('script: list_dir, shell 1.5 s, read_file, shell 1 s, write_file')
        if (report.outcome.kind === 'not_killed') {
          expect(report.boundary).toBeNull()
          continue
        }
        expect(report.boundary).toMatch(BOUNDARY)
        // A parked turn names what a person must decide.
        if (report.outcome.kind === 'parked') expect(report.outcome.codes?.length).toBeGreaterThan(0)
      }
      for (const code of Object.keys(summary.parkCodes)) expect(code).toMatch(/^[a-z_]+$/)
      if (journal === 'on') {
        // Only the journal writes dispatch rows; without it a call in progress is `after_function_call`.
        expect(summary.iterationReports.some((r) => r.boundary?.startsWith('after_tool_dispatch:') === true)).toBe(true)
      } else {
        expect(Object.keys(summary.killsByBoundary).some((b) => b.startsWith('after_tool_dispatch:'))).toBe(false)
      }
      expect(await readdir(tmp)).toEqual([])
    },
  )

  it('prints one line per iteration and the summary without --json', async () => {
    const tmp = await newTmp()
    const result = await runChaos(['chaos', '--journal', 'on', '--iterations', '1', '--seed', '11'], tmp)
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      /^iteration 1\/1 seed 11: (not killed|killed \S+ — (continued|parked [a-z_, ]+)).* — ok$/m,
    )
    expect(result.stdout).toContain('maka chaos --journal on: 1 iteration from seed 11 in ')
    expect(result.stdout).toContain('continued without a person: ')
    expect(result.stdout).toContain('violations: 0')
  })

  it.for([[['--journal', 'maybe']], [['--journal', 'on', '--storm-size', '4']]] as const)(
    '%j is exit 2 with one line on stderr, and nothing is created',
    async ([args]) => {
      const tmp = await newTmp()
      const result = await runChaos(['chaos', ...args], tmp)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      expect(await readdir(tmp)).toEqual([])
    },
  )
})

describe('maka run with the tool journal', () => {
  afterAll(removeScratch)

  it('runs a foreground shell call under the bundled supervisor: its output is the response', async () => {
    const { root, dataDir, workspace } = await scratch()
    const script = await scriptFile(root, 'script.json', [
      { toolCall: { name: 'shell', args: { command: 'echo built >> effects.log && echo built' } } },
      { text: 'Done.' },
    ])
    const result = await new Promise<CliResult>((done) => {
      execFile(
        process.execPath,
        [
          CLI,
          'run',
          '--data-dir',
          dataDir,
          '--session',
          's',
          '--cwd',
          workspace,
          '--yes',
          '--script',
          script,
          'Build.',
        ],
        { env: { ...cliEnv(true), MAKA_RUNTIME_TOOL_JOURNAL: '1' }, timeout: 45_000 },
        (error, stdout, stderr) =>
          done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
      )
    })
    expect(result.code).toBe(0)
    expect(await readFile(join(workspace, 'effects.log'), 'utf8')).toBe('built\n')
    const [runId] = await readdir(join(dataDir, 'sessions', 's', 'runs'))
    const rows = await ledgerRows(dataDir, 's', runId ?? '?')
    const response = rows
      .map((row) => row['content'] as Record<string, unknown> | undefined)
      .find((c) => c?.['kind'] === 'function_response')
    expect(response?.['isError']).toBeUndefined()
    expect(response?.['result']).toMatchObject({ exitCode: 0, stdout: 'built\n' })
    expect(
      rows.some((row) => (row['actions'] as Record<string, unknown> | undefined)?.['toolDispatch'] !== undefined),
    ).toBe(true)
  })
})
