/**
 * The driver against a deliberately faulty product (a fake host whose turn leaves a terminal header
 * without its terminal event, whose recovery appends its repair without a lock, and whose planner
 * answers differently each time): every such fault is reported with the iteration and the seed that
 * replays it, children that reach their crash point are SIGKILLed there and counted per boundary, a
 * forced storm runs over every dead turn and is counted, and the folders of faulty iterations are kept.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { type ChaosHost, type IterationReport, iterationSeeds, runChaos } from '../src/index.js'

const roots: Array<string> = []
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })))
})

const FAULTY_CHILD = fileURLToPath(new URL('./fixtures/faulty-child.mjs', import.meta.url))

const faultyHost = (): ChaosHost => {
  let plans = 0
  return {
    command: process.execPath,
    argsFor: (spec) => [FAULTY_CHILD, JSON.stringify(spec)],
    env: process.env,
    plan: () => {
      plans += 1
      return Promise.resolve({ disposition: 'park', attempt: plans })
    },
  }
}

describe('runChaos', { timeout: 300_000 }, () => {
  describe('when the product breaks invariants', () => {
    it('reports each violation with its iteration and seed, kills at crash points, and keeps the evidence', async () => {
      const root = await mkdtemp(join(tmpdir(), 'maka-chaos-driver-'))
      roots.push(root)
      const reports: Array<IterationReport> = []
      const summary = await runChaos({
        iterations: 8,
        seed: 424242,
        root,
        keep: false,
        host: faultyHost(),
        onIteration: (report) => reports.push(report),
      })
      const seeds = iterationSeeds(424242, 8)
      expect(reports.map((r) => [r.iteration, r.seed])).toEqual(seeds.map((seed, i) => [i + 1, seed]))
      expect(summary.violations.length).toBeGreaterThan(0)
      for (const v of summary.violations) expect(v.seed).toBe(seeds[v.iteration - 1])

      for (const report of reports) {
        const codes = report.violations.map((v) => v.code)
        // The faulty planner answers differently every time: every phase of every iteration says so.
        expect(codes).toContain('plan_not_deterministic')
        expect(report.keptAt).not.toBeNull()
        expect(existsSync(report.keptAt ?? '')).toBe(true)
        const turnPoint = /^turn: kill at ([a-z_]+)#/.exec(report.schedule[1] ?? '')?.[1]
        if (turnPoint !== undefined) {
          // Killed at its crash point, the turn wrote nothing.
          expect(report.kills[turnPoint]).toBeGreaterThanOrEqual(1)
          expect(codes).not.toContain('terminal_header_without_event')
        } else if (report.schedule[1] === 'turn: no kill') {
          expect(codes).toContain('terminal_header_without_event')
        }
      }
      expect(reports.some((r) => /^turn: kill at [a-z_]+#/.test(r.schedule[1] ?? ''))).toBe(true)
      expect(summary.kills).toBe(Object.values(summary.killsByBoundary).reduce((a, b) => a + b, 0))
    })
  })

  describe('when a storm is forced and the product has two repairers of one run', () => {
    it('kills every turn, storms its dead owner, counts the storms and reports the duplicate repair', async () => {
      const root = await mkdtemp(join(tmpdir(), 'maka-chaos-storm-'))
      roots.push(root)
      const reports: Array<IterationReport> = []
      const summary = await runChaos({
        iterations: 2,
        seed: 77,
        root,
        keep: false,
        host: faultyHost(),
        storm: { size: 6, roles: 'recover' },
        onIteration: (report) => reports.push(report),
      })
      expect(summary).toMatchObject({
        storms: 2,
        maxStormSize: 6,
        stormsBySize: { 6: 2 },
        staleOwnerStorms: 2,
        // The seed cues the first storm (every child waits for one line on stdin) and not the second.
        cuedStorms: 1,
        stormChildren: 12,
      })
      expect(reports.map((r) => r.storm?.cued)).toEqual([true, false])
      for (const report of reports) {
        // A forced storm needs a dead owner with an open run: the turn always dies at a crash point.
        expect(report.schedule[1]).toMatch(/^turn: kill at after_[a-z_]+#\d+$/)
        const stormLine = report.schedule.find((line) => line.startsWith('storm ')) ?? ''
        expect(stormLine).toMatch(
          /^storm after the turn, if it is killed: 6 at once, (on one cue|on cues spread over \d+ ms|as each starts) \[recover /,
        )
        expect(report.storm).toMatchObject({ size: 6, recovers: 6, resumers: 0, staleOwner: true })
        // The seed gives at least two storm children no kill at all, so at least two repairs land.
        expect(stormLine.match(/recover (cued at \d+ ms, )?no kill/g)?.length ?? 0).toBeGreaterThanOrEqual(2)
        const inStorm = report.violations.filter((v) => v.phase === 'storm').map((v) => v.code)
        expect(inStorm).toContain('duplicate_repair')
        expect(inStorm).toContain('duplicate_row_id')
        expect(report.keptAt).not.toBeNull()
      }
    })

    it('refuses a storm size out of range before anything runs', async () => {
      const root = await mkdtemp(join(tmpdir(), 'maka-chaos-storm-'))
      roots.push(root)
      await expect(
        runChaos({ iterations: 1, seed: 1, root, keep: false, host: faultyHost(), storm: { size: 17 } }),
      ).rejects.toThrow(RangeError)
    })
  })
})
