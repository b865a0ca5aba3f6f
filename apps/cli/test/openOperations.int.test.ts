/**
 * What a park answer says about the tool calls left open, on the BUILT CLI: a protocol turn killed
 * right after its dispatch of a call the runtime cannot judge (a background `shell` run, recovery
 * mode `never_auto_retry`) parks `tool_outcome_unknown`; `resume plan --json` lists the operation
 * (never its args or a preview), and the text of `resume plan` and `resume` lists it with its tool,
 * status, mode, why it parked, what each verdict would mean and the `maka resolve` command.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OPERATOR_VERDICTS, OperatorVerdictMeanings, describeParkReason } from '@maka/events'
import { killedDemoTurn, removeScratch, runCli, runHeaders, scratch, scriptFile } from './support.js'

const SECRET_COMMAND = 'echo open-secret-7 > bg.txt'

let dirs: Awaited<ReturnType<typeof scratch>>

beforeAll(async () => {
  dirs = await scratch()
  const script = await scriptFile(dirs.root, 'bg.json', [
    { toolCall: { name: 'shell', args: { command: SECRET_COMMAND, background: true } } },
    { text: 'Started it.' },
  ])
  await killedDemoTurn(dirs, 's-open', 'after_tool_dispatch_committed', { script })
  // Another host's recovery closes the killed run first, so the commands below only read.
  expect((await runCli(['recover', '--data-dir', dirs.dataDir])).code).toBe(0)
}, 90_000)

afterAll(removeScratch)

describe('a park answer with an open tool call', { timeout: 90_000 }, () => {
  it.for(['resume plan', 'resume'])(
    '%s prints the call, why it parked, what each verdict means and the resolve command',
    async (command) => {
      const before = await runHeaders(dirs.dataDir, 's-open')
      const result = await runCli([...command.split(' '), '--data-dir', dirs.dataDir, '--session', 's-open'], {
        flag: true,
      })
      expect(result.code).toBe(3)
      // The plan JSON lists the same operation, never with its args or a preview.
      const planned = await runCli(['resume', 'plan', '--data-dir', dirs.dataDir, '--session', 's-open', '--json'], {
        flag: true,
      })
      expect(planned.code).toBe(3)
      expect(planned.stdout).not.toContain('open-secret-7')
      const plan = JSON.parse(planned.stdout) as {
        rejectionReasons: ReadonlyArray<string>
        openToolOperations: ReadonlyArray<Record<string, unknown> & { toolCallId: string; operationId: string }>
      }
      expect(plan.rejectionReasons).toContain('tool_outcome_unknown')
      expect(plan.openToolOperations).toHaveLength(1)
      expect(plan.openToolOperations[0]).toMatchObject({
        toolName: 'shell',
        status: 'dispatched_outcome_unknown',
        recoveryMode: 'never_auto_retry',
        action: null,
        reason: 'tool_outcome_unknown',
      })
      expect(Object.keys(plan.openToolOperations[0] ?? {})).not.toContain('preview')
      const { toolCallId, operationId } = plan.openToolOperations[0] ?? { toolCallId: '?', operationId: '?' }
      expect(result.stdout).toContain('open tool call:')
      expect(result.stdout).toContain(
        `- shell (call ${toolCallId}, operation ${operationId}): dispatched_outcome_unknown, mode never_auto_retry`,
      )
      expect(result.stdout).toContain(`why: ${describeParkReason('tool_outcome_unknown')} (tool_outcome_unknown)`)
      for (const verdict of OPERATOR_VERDICTS) {
        expect(result.stdout).toContain(`${verdict}: ${OperatorVerdictMeanings[verdict]}`)
      }
      expect(result.stdout).toContain(`maka resolve s-open --call ${toolCallId} --as applied|not_applied|failed`)
      // The args never reach the output, and the park wrote nothing.
      expect(result.stdout + result.stderr).not.toContain('open-secret-7')
      expect(await runHeaders(dirs.dataDir, 's-open')).toEqual(before)
    },
  )
})
