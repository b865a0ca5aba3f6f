/**
 * `maka chaos` on the BUILT CLI: 50 seeded iterations of SIGKILLed turns and resumes find no
 * violation on correct code, an iteration's seed replays its schedule alone, scratch dirs are
 * removed, and bad input is exit 2 before anything is created. (That the checker can fail is proven
 * in packages/chaos/test/checkInvariants.int.test.ts, on data dirs that break each invariant.)
 */
import { readdir } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { type CliResult, removeScratch, freshTmp, runChaosCli } from './support.js'

interface ChaosJson {
  readonly ok: boolean
  readonly seed: number
  readonly iterations: number
  readonly killsByBoundary: Readonly<Record<string, number>>
  readonly kills: number
  readonly children: number
  readonly concurrentRounds: number
  readonly violations: ReadonlyArray<unknown>
  readonly root: string | null
  readonly iterationReports: ReadonlyArray<{
    readonly iteration: number
    readonly seed: number
    readonly schedule: ReadonlyArray<string>
  }>
}

// A loaded 2-core machine may take minutes for 50 iterations; the test waits on the process, not on a clock.
const CHAOS_TIMEOUT_MS = 600_000

const runChaos = (args: ReadonlyArray<string>, tmp: string): Promise<CliResult> =>
  runChaosCli(args, tmp, CHAOS_TIMEOUT_MS)

const newTmp = (): Promise<string> => freshTmp('maka-cli-chaos-')

describe('maka chaos', { timeout: CHAOS_TIMEOUT_MS }, () => {
  afterAll(removeScratch)

  describe('when run for 50 iterations on correct code', () => {
    it('kills children at many boundaries, finds no violation, exits 0, and replays an iteration from its seed', async () => {
      const tmp = await newTmp()
      const result = await runChaos(['chaos', '--iterations', '50', '--seed', '20261203', '--json'], tmp)
      expect(result.stderr).toBe('')
      const summary = JSON.parse(result.stdout) as ChaosJson
      expect(summary.violations).toEqual([])
      expect(result.code).toBe(0)
      expect(summary.ok).toBe(true)
      expect(summary.iterations).toBe(50)
      expect(summary.iterationReports).toHaveLength(50)
      expect(summary.kills).toBeGreaterThan(25)
      expect(summary.children).toBeGreaterThan(summary.kills)
      expect(summary.concurrentRounds).toBeGreaterThan(0)
      // Crash points of turns and continuations, the moment between a side effect and its response,
      // and random moments all came up.
      for (const boundary of [
        'after_function_call',
        'after_tool_response',
        'after_terminal_event_committed',
        'after_tool_side_effect',
        'random_moment',
      ]) {
        expect(summary.killsByBoundary[boundary] ?? 0, boundary).toBeGreaterThan(0)
      }
      expect(summary.root).toBeNull()
      expect(await readdir(tmp)).toEqual([])

      const seventeenth = summary.iterationReports[16]
      if (seventeenth === undefined) throw new Error('no iteration 17')
      const replay = await runChaos(['chaos', '--iterations', '1', '--seed', String(seventeenth.seed), '--json'], tmp)
      expect(replay.code).toBe(0)
      const replayed = JSON.parse(replay.stdout) as ChaosJson
      expect(replayed.iterationReports.map((r) => [r.seed, r.schedule])).toEqual([
        [seventeenth.seed, seventeenth.schedule],
      ])
    })
  })

  describe('when stdout is not a terminal and --json is not given', () => {
    it('prints one plain line per iteration and the summary with kills per boundary', async () => {
      const tmp = await newTmp()
      const result = await runChaos(['chaos', '--iterations', '2', '--seed', '7'], tmp)
      expect(result.code).toBe(0)
      const lines = result.stdout.split('\n')
      expect(lines[0]).toMatch(/^iteration 1\/2 seed 7: \d+ children, .* — ok$/)
      expect(lines[1]).toMatch(/^iteration 2\/2 seed \d+: /)
      expect(result.stdout).toContain('maka chaos: 2 iterations from seed 7 in ')
      expect(result.stdout).toContain('kills per boundary:')
      expect(result.stdout).toContain('violations: 0')
      expect(result.stdout).not.toContain('\r')
      expect(await readdir(tmp)).toEqual([])
    })
  })

  describe('when the input is bad', () => {
    it.for([
      [['--iterations', '0']],
      [['--iterations', 'many']],
      [['--iterations', '2.5']],
      [['--seed', '-1']],
      [['--seed', 'abc']],
      [['--seed', '4294967296']],
      [['--data-dir', '/tmp/somewhere']],
    ] as const)('%j is exit 2 with one line on stderr, and nothing is created', async ([args]) => {
      const tmp = await newTmp()
      const result = await runChaos(['chaos', ...args], tmp)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      expect(result.stderr).toMatch(/^maka: /)
      expect(await readdir(tmp)).toEqual([])
    })
  })
})
