/**
 * `maka chaos --storm-size` on the BUILT CLI: every iteration's turn is SIGKILLed at a crash point
 * and a storm of real `maka recover` / `maka resume` children starts at once over its dead owner's
 * session, on JSONL and SQLite (PostgreSQL: postgres.int.test.ts, beside the other chaos run on that cluster). The summary
 * counts the storms, their sizes and how many began over the dead turn's owner lock; the checker
 * finds no two repairers of one run. (That it would find them is proven in packages/chaos: the
 * single-writer checks on raw ledgers, and a driver run whose faulty product repairs without a lock.)
 */
import { readdir } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { type CliResult, removeScratch, freshTmp, runChaosCli } from './support.js'

interface StormJson {
  readonly ok: boolean
  readonly children: number
  readonly storms: number
  readonly maxStormSize: number
  readonly stormsBySize: Readonly<Record<string, number>>
  readonly staleOwnerStorms: number
  readonly cuedStorms: number
  readonly stormChildren: number
  readonly violations: ReadonlyArray<{ readonly code: string }>
  readonly root: string | null
  readonly iterationReports: ReadonlyArray<{
    readonly schedule: ReadonlyArray<string>
    readonly storm: {
      readonly size: number
      readonly recovers: number
      readonly resumers: number
      readonly cued: boolean
    } | null
  }>
}

// Sixteen node processes at once on two loaded cores: generous, the test waits on the process.
const CHAOS_TIMEOUT_MS = 300_000

const runChaos = (args: ReadonlyArray<string>, tmp: string): Promise<CliResult> =>
  runChaosCli(args, tmp, CHAOS_TIMEOUT_MS)

const newTmp = (): Promise<string> => freshTmp('maka-cli-storm-')

/** Every iteration stormed with `size` children over its dead turn's owner lock, and nothing broke. */
const expectStormsRan = (summary: StormJson, iterations: number, size: number) => {
  expect(summary.violations).toEqual([])
  expect(summary.ok).toBe(true)
  expect(summary.storms).toBe(iterations)
  expect(summary.maxStormSize).toBe(size)
  expect(summary.stormsBySize).toEqual({ [size]: iterations })
  expect(summary.staleOwnerStorms).toBe(iterations)
  expect(summary.stormChildren).toBe(iterations * size)
  expect(summary.children).toBeGreaterThan(summary.stormChildren)
  for (const report of summary.iterationReports) {
    expect(report.schedule[1]).toMatch(/^turn: kill at after_[a-z_]+#\d+$/)
    expect(report.storm?.size).toBe(size)
    expect((report.storm?.recovers ?? 0) + (report.storm?.resumers ?? 0)).toBe(size)
  }
}

describe('maka chaos --storm-size', { timeout: CHAOS_TIMEOUT_MS }, () => {
  afterAll(removeScratch)

  describe('when storms of 16 are forced on JSONL', () => {
    it('storms every dead turn with 16 children at once, counts it, and finds no duplicate repair', async () => {
      const tmp = await newTmp()
      const result = await runChaos(
        ['chaos', '--iterations', '2', '--seed', '4242', '--storm-size', '16', '--json'],
        tmp,
      )
      expect(result.stderr).toBe('')
      const summary = JSON.parse(result.stdout) as StormJson
      expectStormsRan(summary, 2, 16)
      // The seed starts the first storm's children as each can and cues the second's all at once.
      expect(summary.iterationReports.map((r) => r.storm?.cued)).toEqual([false, true])
      expect(summary.cuedStorms).toBe(1)
      expect(result.code).toBe(0)
      expect(summary.root).toBeNull()
      expect(await readdir(tmp)).toEqual([])
    })
  })

  describe('when the output is plain text', () => {
    it('prints the storm of each iteration and the storms line of the summary', async () => {
      const tmp = await newTmp()
      const result = await runChaos(
        ['chaos', '--iterations', '1', '--seed', '9', '--storm-size', '3', '--storm-roles', 'recover'],
        tmp,
      )
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(/^iteration 1\/1 seed 9: \d+ children, .*; a storm of 3 — ok\n/)
      expect(result.stdout).toContain(
        "storms: 1 (3 children, at most 3 at once; sizes 3; 0 on cue), 1 over the dead turn's owner lock",
      )
      expect(result.stdout).toContain('violations: 0')
    })
  })

  describe('when storms are forced on SQLite', () => {
    it('storms over the dead owner lock in a SQLite store', async () => {
      const tmp = await newTmp()
      const result = await runChaos(
        ['chaos', '--store', 'sqlite:chaos.sqlite', '--iterations', '1', '--seed', '31', '--storm-size', '8', '--json'],
        tmp,
      )
      expect(result.stderr).toBe('')
      expectStormsRan(JSON.parse(result.stdout) as StormJson, 1, 8)
      expect(result.code).toBe(0)
    })
  })

  describe('when the storm flags are bad', () => {
    it.for([
      [['--storm-size', '1']],
      [['--storm-size', '17']],
      [['--storm-size', 'lots']],
      [['--storm-roles', 'recover']],
      [['--storm-size', '4', '--storm-roles', 'everyone']],
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
