/**
 * `maka resolve` end to end on the built CLI: a Phase 1 turn killed with its shell call committed and
 * no response parks `dangling_tool_state`; `resume plan` names the resolve command; bad input exits 2
 * and a refusal 3, each writing nothing; a verdict is recorded (exit 0, one JSON object), `show` tells
 * it in the lineage and the timeline, and `resume` continues. The `--output` text never reaches
 * stderr, the verbose lifecycle lines or the command's own output.
 */
import { spawn } from 'node:child_process'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI, cliEnv, hashTree, json, removeScratch, runCli, scratch, scriptFile } from './support.js'

afterAll(removeScratch)

const SECRET = 'SECRET-OPERATOR-OUTPUT-1f2e'
const SESSION = 'resolve-e2e'

// A turn whose shell call is committed when the run is killed: no journal (Phase 1), no response.
const danglingSession = async (): Promise<{
  readonly dataDir: string
  readonly workspace: string
  readonly root: string
}> => {
  const { root, dataDir, workspace } = await scratch()
  const script = await scriptFile(root, 'slow.json', [
    { toolCall: { name: 'shell', args: { command: 'sleep 3' } } },
    { text: 'never reached' },
  ])
  await new Promise<void>((done, fail) => {
    const child = spawn(
      process.execPath,
      [CLI, 'run', '--data-dir', dataDir, '--session', SESSION, '--cwd', workspace, '--yes', '--script', script, 'go'],
      { env: { ...cliEnv(true), MAKA_RUNTIME_TOOL_JOURNAL: '0' }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`the run never committed its call: ${out}`))
    }, 60_000)
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      out += chunk
      if (out.includes('function_call')) child.kill('SIGKILL')
    })
    child.on('close', (_code, signal) => {
      clearTimeout(timer)
      if (signal === 'SIGKILL') done()
      else fail(new Error(`the run ended by itself: ${out}`))
    })
  })
  return { root, dataDir, workspace }
}

describe('maka resolve', { timeout: 180_000 }, () => {
  it('refuses bad input (2) and unknown calls (3) writing nothing, records a verdict (0), shows it, and resume continues', async () => {
    const { root, dataDir, workspace } = await danglingSession()
    const opts = { flag: true, cwd: workspace }

    // The park names the command to run, with the call id.
    const plan = await runCli(['resume', 'plan', '--data-dir', dataDir, '--session', SESSION], opts)
    expect(plan.code).toBe(3)
    const resolveLine = plan.stdout.split('\n').find((line) => line.includes('maka resolve') && line.includes('--call'))
    expect(resolveLine).toMatch(/maka resolve resolve-e2e --call (\S+) --as applied\|not_applied\|failed/)
    const callId = /--call (\S+)/.exec(resolveLine ?? '')?.[1] ?? ''
    expect(plan.stdout).toContain(`maka resume --session ${SESSION}`)

    const before = await hashTree(dataDir)
    const base = ['resolve', SESSION, '--data-dir', dataDir]
    // Bad input, in the contract's order: unavailable first, then --as, the target, the output.
    const unavailable = await runCli([...base, '--call', callId, '--as', 'applied'], {
      ...opts,
      env: { MAKA_RUNTIME_TOOL_JOURNAL: '0' },
    })
    expect(unavailable.code).toBe(2)
    expect(unavailable.stderr).toContain('MAKA_RUNTIME_TOOL_JOURNAL=0')
    const badVerdict = await runCli([...base, '--call', callId, '--as', 'maybe'], opts)
    expect(badVerdict.code).toBe(2)
    expect(badVerdict.stderr).toContain('applied, not_applied or failed')
    const twoTargets = await runCli([...base, '--call', callId, '--operation', 'x', '--as', 'failed'], opts)
    expect(twoTargets.code).toBe(2)
    const noTarget = await runCli([...base, '--as', 'failed', '--json'], opts)
    expect(noTarget.code).toBe(2)
    expect(json(noTarget)).toMatchObject({
      command: 'resolve',
      exitCode: 2,
      result: { _tag: 'Invalid', code: 'invalid_target' },
    })
    const tooLong = await runCli(
      [...base, '--call', callId, '--as', 'failed', '--output', 'x'.repeat(64 * 1024 + 1)],
      opts,
    )
    expect(tooLong.code).toBe(2)
    // A refusal: no such call.
    const unknown = await runCli([...base, '--call', 'no-such-call', '--as', 'failed', '--json'], opts)
    expect(unknown.code).toBe(3)
    expect(json(unknown)).toEqual({
      type: 'result',
      command: 'resolve',
      sessionId: SESSION,
      result: {
        _tag: 'Refused',
        codes: ['resolve_call_unknown'],
        messages: ['No tool call with that id was found in the interrupted turn.'],
      },
      exitCode: 3,
    })
    expect(await hashTree(dataDir)).toBe(before)

    // Recorded, with a result text of the person's own.
    const recorded = await runCli(
      [...base, '--call', callId, '--as', 'applied', '--output', SECRET, '--json', '--verbose'],
      opts,
    )
    expect(recorded.code).toBe(0)
    const answer = json<{ result: Record<string, unknown> }>(recorded)
    expect(answer).toMatchObject({
      type: 'result',
      command: 'resolve',
      sessionId: SESSION,
      exitCode: 0,
      result: { _tag: 'Resolved', sessionId: SESSION, toolCallId: callId, verdict: 'applied' },
    })
    expect(recorded.stderr).toContain('maka: call_resolved')
    expect(recorded.stderr).toContain('verdict=applied actor=cli')
    expect(recorded.stderr).not.toContain(SECRET)
    expect(recorded.stdout).not.toContain(SECRET)

    // The same call again: settled now.
    const again = await runCli([...base, '--call', callId, '--as', 'failed'], opts)
    expect(again.code).toBe(3)
    expect(again.stdout).toContain('resolve_call_settled')

    // `show` tells the settlement in the lineage and on both rows, text and JSON; never the output text.
    const shown = await runCli(['show', SESSION, '--data-dir', dataDir], opts)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(`settles call ${callId}`)
    expect(shown.stdout).toContain('adjudicated by a person: applied (through cli)')
    expect(shown.stdout).toContain('recorded by a person: applied through cli')
    expect(shown.stdout).not.toContain(SECRET)
    const shownJson = json<{ runs: ReadonlyArray<{ runId: string; settlements?: ReadonlyArray<unknown> }> }>(
      await runCli(['show', SESSION, '--data-dir', dataDir, '--json'], opts),
    )
    const adjudication = shownJson.runs.find((run) => run.runId === answer.result['targetRunId'])
    expect(adjudication?.settlements).toEqual([
      {
        operationId: answer.result['operationId'],
        toolCallId: callId,
        runId: answer.result['targetRunId'],
        action: 'adjudicate',
        settlementOrigin: 'operator_adjudication',
        isError: false,
        verdict: 'applied',
        actor: 'cli',
      },
    ])

    // Resume continues from the adjudication run.
    const script = await scriptFile(root, 'after.json', [{ text: 'Thanks, carrying on.' }])
    const resumed = await runCli(
      ['resume', '--data-dir', dataDir, '--session', SESSION, '--script', script, '--verbose'],
      opts,
    )
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain('Thanks, carrying on.')
    expect(resumed.stderr).not.toContain(SECRET)
  })
})
