/**
 * The surface a script author relies on: `maka --version`, exit codes and the resume flag in every
 * command's `--help`, newline-delimited `--json` for `run`, denied tool calls shown as denied, and
 * `resume` / `resume plan` on a data dir with no session (park, exit 3, nothing created).
 */
import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ParkReasonSentences } from '@maka/events'
import { hashTree, json, jsonLines, removeScratch, runCli, scratch } from './support.js'

const COMMANDS = [
  ['demo'],
  ['chat'],
  ['run'],
  ['sessions'],
  ['show'],
  ['recover'],
  ['resume'],
  ['resume', 'plan'],
  ['ui'],
]

describe('the maka command surface', { timeout: 120_000 }, () => {
  let env: Awaited<ReturnType<typeof scratch>>

  beforeAll(async () => {
    env = await scratch()
  })

  afterAll(removeScratch)

  describe('when asked for its version', () => {
    it('prints the CLI package version and exits 0', async () => {
      const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
        version: string
      }
      for (const flag of ['--version', '-V']) {
        const result = await runCli([flag])
        expect(result.code).toBe(0)
        expect(result.stdout.trim()).toBe(manifest.version)
      }
    })
  })

  describe('when asked for help', () => {
    it.each([[[]], ...COMMANDS.map((c) => [c])])(
      '%j lists its exit codes and names the resume flag',
      async (command) => {
        const result = await runCli([...command, '--help'])
        expect(result.code).toBe(0)
        expect(result.stdout).toContain('Exit codes:')
        expect(result.stdout).toMatch(/^\s+0\s/m)
        expect(result.stdout).toMatch(/^\s+2\s+.*bad input|^\s+2\s+unknown session/m)
        expect(result.stdout).toContain('MAKA_RUNTIME_SAFE_BOUNDARY_RESUME')
      },
    )

    it('names 130 for the commands that run a turn and 3 for the resume commands', async () => {
      for (const command of [['run'], ['resume'], ['chat']]) {
        expect((await runCli([...command, '--help'])).stdout).toMatch(/^\s+130\s/m)
      }
      for (const command of [['resume'], ['resume', 'plan']]) {
        expect((await runCli([...command, '--help'])).stdout).toMatch(/^\s+3\s+/m)
      }
    })
  })

  describe('when maka run denies a tool call', () => {
    it('shows the response as denied and says so at the end', async () => {
      const result = await runCli(['run', '--data-dir', env.dataDir, '--cwd', env.workspace, 'write notes'])
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(/function_response\s+write_file denied/)
      expect(result.stdout).not.toMatch(/write_file error/)
      expect(result.stdout).toContain('1 tool call was denied and did not run (write_file).')
    })
  })

  describe('when maka run --json runs a turn', () => {
    it('streams one JSON object per committed event, then one result object', async () => {
      const result = await runCli(['run', '--data-dir', env.dataDir, '--cwd', env.workspace, '--json', 'list'])
      expect(result.code).toBe(0)
      const lines = jsonLines(result)
      const events = lines.slice(0, -1)
      const last = lines[lines.length - 1]
      expect(events.every((line) => line['type'] === 'event')).toBe(true)
      expect(events.map((line) => line['eventId'])).toEqual(
        events.map((_, i) => `${String(last?.['runId'])}-e${i + 1}`),
      )
      expect(events[0]).toMatchObject({ role: 'user', kind: 'text', text: 'list' })
      expect(
        events.find((line) => line['kind'] === 'function_response' && line['toolName'] === 'write_file'),
      ).toMatchObject({
        denied: true,
      })
      expect(events[events.length - 1]).toMatchObject({ kind: 'terminal', status: 'completed' })
      expect(last).toMatchObject({
        type: 'result',
        command: 'run',
        status: 'completed',
        deniedToolCalls: 1,
        exitCode: 0,
      })
      // Tool arguments and results never reach the stream: the workspace file's content stays out.
      expect(result.stdout).not.toContain('SECRET-RESULT')
    })
  })

  describe('when the data dir holds no session', () => {
    it('resume plan and resume park with resume_candidate_missing (exit 3) and create nothing', async () => {
      const { dataDir } = await scratch()
      const plan = await runCli(['resume', 'plan', '--data-dir', dataDir, '--json'], { flag: true })
      expect(plan.code).toBe(3)
      expect(json(plan)).toEqual({
        disposition: 'park',
        rejectionReasons: ['resume_candidate_missing'],
        diagnostics: [expect.objectContaining({ code: 'resume_candidate_missing', severity: 'error' })],
        sourceRunId: null,
        sourceRuntimeEventHighWater: null,
        sourceRuntimeEventPrefixDigest: null,
      })
      const text = await runCli(['resume', 'plan', '--data-dir', dataDir], { flag: true })
      expect(text.code).toBe(3)
      expect(text.stdout).toContain(ParkReasonSentences.resume_candidate_missing)

      const resumed = await runCli(['resume', '--data-dir', dataDir], { flag: true })
      expect(resumed.code).toBe(3)
      expect(resumed.stdout).toContain(ParkReasonSentences.resume_candidate_missing)
      const resumedJson = await runCli(['resume', '--data-dir', dataDir, '--json'], { flag: true })
      expect(resumedJson.code).toBe(3)
      expect(jsonLines(resumedJson).map((line) => line['type'])).toEqual(['plan', 'result'])
      expect(await hashTree(dataDir)).toBe('absent')
    })

    it('parks with resume_feature_disabled first when the flag is off', async () => {
      const { dataDir } = await scratch()
      const plan = await runCli(['resume', 'plan', '--data-dir', dataDir, '--json'])
      expect(plan.code).toBe(3)
      expect(json(plan)['rejectionReasons']).toEqual(['resume_feature_disabled'])
    })
  })
})
