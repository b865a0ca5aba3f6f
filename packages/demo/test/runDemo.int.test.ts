/**
 * The drill against a host of the test's own: a child that runs the built-in demo script and speaks
 * the drill's protocol, a runtime from `makeFileRuntime`. Killed after a tool response it recovers,
 * continues once and judges every step ok; killed between a call and its result it parks; a child
 * that never reaches its crash point fails the first step, so the drill can fail.
 */
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { makeFileRuntime } from '@maka/executor'
import { DEMO_SCRIPT } from '@maka/providers'
import { builtinTools } from '@maka/tools'
import { type DemoCrashPoint, type DemoDetail, type DemoHost, type DemoReport, runDemo } from '../src/index.js'

const CHILD = fileURLToPath(new URL('./support/drillChild.mjs', import.meta.url))

interface Summary {
  readonly role: string
  readonly kind: string | null
}

const roots: Array<string> = []
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })))
})

const drill = async (
  at: DemoCrashPoint,
  options: { readonly keep?: boolean; readonly never?: boolean } = {},
): Promise<{
  readonly report: DemoReport
  readonly details: ReadonlyArray<DemoDetail<Summary>>
  readonly started: number
}> => {
  const details: Array<DemoDetail<Summary>> = []
  let started = 0
  const host: DemoHost<Summary> = {
    child: ({ dataDir, sessionId, cwd }) => ({
      command: process.execPath,
      args: [CHILD, dataDir, sessionId, cwd, at, options.never === true ? 'never' : 'stop'],
    }),
    compose: (choice) => makeFileRuntime({ ...choice, tools: builtinTools() }),
    onStepStart: () => {
      started += 1
    },
    onDetail: (detail) => details.push(detail),
  }
  const report = await runDemo(
    { at, script: DEMO_SCRIPT, builtin: true, dataDir: null, keep: options.keep === true },
    host,
  )
  if (report.kept) roots.push(join(report.workspace, '..'))
  return { report, details, started }
}

describe('runDemo', () => {
  describe('when the child is killed after a tool response', () => {
    it('recovers, continues once from the pinned boundary, and judges all six steps ok', async () => {
      const { report, details, started } = await drill('after_tool_response', { keep: true })
      expect(report.steps.map((s) => [s.n, s.ok])).toEqual([1, 2, 3, 4, 5, 6].map((n) => [n, true]))
      expect(started).toBe(6)
      expect(report.ok).toBe(true)
      expect(report.plan?.disposition).toBe('continue')
      expect(report.result).toMatchObject({ _tag: 'Finished', status: 'completed' })
      const lineage = report.lineage
      expect(lineage?.source).toMatchObject({ status: 'failed', failureClass: 'app_restarted' })
      expect(lineage?.continuation?.status).toBe('completed')
      expect(lineage?.continuation?.continuationSource?.sourceRunId).toBe(report.sourceRunId)
      expect(lineage?.claim?.targetRunId).toBe(lineage?.continuation?.runId)
      expect(lineage?.userRowsInContinuation).toBe(0)
      expect(lineage?.notesWrites).toBe(1)
      expect(existsSync(join(report.workspace, 'notes.txt'))).toBe(true)
      expect(details.filter((d) => d.kind === 'childEvent').length).toBeGreaterThan(0)
      expect(details.filter((d) => d.kind === 'check').every((d) => d.kind === 'check' && d.ok)).toBe(true)
      expect(details.filter((d) => d.kind === 'check')).toHaveLength(6)
    })
  })

  describe('when the child is killed between a tool call and its result', () => {
    it('parks with dangling_tool_state, creates no continuation and removes the scratch folder', async () => {
      const { report, details } = await drill('after_function_call')
      expect(report.ok).toBe(true)
      expect(report.plan?.disposition).toBe('park')
      expect(details).toContainEqual({ kind: 'parkReason', code: 'dangling_tool_state' })
      expect(report.result).toBeNull()
      expect(report.lineage?.continuation).toBeNull()
      expect(report.lineage?.claim).toBeNull()
      expect(report.kept).toBe(false)
      expect(existsSync(report.workspace)).toBe(false)
    })
  })

  describe('when the child never reaches its crash point', () => {
    it('fails the first step and the report is not ok', async () => {
      const { report, details } = await drill('after_tool_response', { never: true })
      expect(report.steps[0]).toMatchObject({ n: 1, ok: false })
      expect(report.ok).toBe(false)
      expect(details).toContainEqual({
        kind: 'note',
        text: "the child's turn ended (completed) without reaching after_tool_response",
      })
    })
  })
})
