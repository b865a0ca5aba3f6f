/**
 * The chat with a command that outlived its agent, in a real pseudo-terminal (tmux): a `maka run`
 * whose foreground shell command (under the supervisor) SIGKILLs the agent and keeps running.
 * `/resume` shows which call it waits for and for how long; Esc stops the wait and nothing is
 * written; `/resume` again waits and, once the command ends, continues by itself with the command's
 * real end recorded (reattached) — one continuation, no prompt sent again.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import {
  ledgerRows,
  removeScratch,
  runHeaders,
  runningCommandSession,
  scratch,
  scriptFile,
  tmuxChat,
  waitFor,
} from './support.js'

const chat = tmuxChat('wait', { columns: 120, rows: 45 })
const { screen, keys, press, type } = chat

afterEach(chat.close)
afterAll(removeScratch)

describe('maka chat and a command still running', { timeout: 240_000 }, () => {
  it('/resume waits for it with the call and its time; Esc stops the wait; it continues when the command ends', async () => {
    const dirs = await scratch()
    await runningCommandSession(dirs, 's-wait')
    const cont = await scriptFile(dirs.root, 'cont.json', [{ text: 'The build finished; carrying on.' }])
    await chat.open(
      ['--data-dir', dirs.dataDir, '--session', 's-wait', '--cwd', dirs.workspace, '--script', cont],
      true,
      ['MAKA_RUNTIME_TOOL_JOURNAL=1'],
    )
    await waitFor('the offer', () => screen().includes('Interrupted turn found'), 60_000)
    keys('n')
    await waitFor('the offer to go', () => screen().includes('Not resumed; /resume continues it later.'), 60_000)
    const [source] = await runHeaders(dirs.dataDir, 's-wait')
    const sourceRows = await ledgerRows(dirs.dataDir, 's-wait', String(source?.['runId']))
    const call = sourceRows
      .map((row) => row['content'] as { kind?: string; id?: string } | undefined)
      .find((c) => c?.kind === 'function_call')
    const callId = call?.id ?? '?'

    type('/resume')
    await waitFor(
      'the waiting line',
      () =>
        new RegExp(`Waiting for shell \\(call ${callId}\\), still running after \\d+ s; Esc stops waiting`).test(
          screen(),
        ),
      60_000,
    )
    // The waiting line never shows the command (the reopened transcript above it does, as before).
    const line = screen()
      .split('\n')
      .find((l) => l.includes('Waiting for shell'))
    expect(line).not.toContain('MAKA_AGENT_PID')
    press('Escape')
    await waitFor('the wait to stop', () => screen().includes('Stopped waiting; nothing was written.'), 60_000)
    expect(screen()).toContain('(tool_still_running)')
    expect(await runHeaders(dirs.dataDir, 's-wait')).toHaveLength(1)

    type('/resume')
    await waitFor(
      'the waiting line again',
      () => screen().split('Stopped waiting')[1]?.includes('Waiting for shell') === true,
      60_000,
    )
    await writeFile(join(dirs.workspace, 'release'), '')
    await waitFor('the continuation', () => screen().includes('The build finished; carrying on.'), 90_000)
    const continuation = await waitFor(
      'the completed continuation',
      async () =>
        (await runHeaders(dirs.dataDir, 's-wait')).find(
          (h) => h['continuationSource'] !== undefined && h['status'] === 'completed',
        ),
      60_000,
    )
    const headers = await runHeaders(dirs.dataDir, 's-wait')
    expect(headers.filter((h) => h['continuationSource'] !== undefined)).toHaveLength(1)
    const rows = await ledgerRows(dirs.dataDir, 's-wait', String(continuation['runId']))
    expect(rows.filter((r) => r['role'] === 'user')).toHaveLength(0)
    const response = rows.find((r) => (r['content'] as { kind?: string } | undefined)?.kind === 'function_response')
    expect(response?.['content']).toMatchObject({ id: callId, result: { exitCode: 0, stdout: 'released\n' } })
  })
})
