/**
 * `/resolve` in the chat, in a real pseudo-terminal (tmux): a protocol turn killed right after the
 * dispatch of a call the runtime cannot judge (a background `shell` run) parks; `/resolve` lists the
 * open call with what each verdict would mean and the command; a bad line gets the usage;
 * `/resolve <call> failed <text>` records the person's verdict (actor `tui`), says `/resume` goes on
 * from it, and `/resume` then continues the turn — no command run, no prompt sent again.
 */
import { readdir } from 'node:fs/promises'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { OperatorVerdictMeanings } from '@maka/events'
import {
  killedDemoTurn,
  ledgerRows,
  removeScratch,
  runHeaders,
  scratch,
  scriptFile,
  tmuxChat,
  waitFor,
} from './support.js'

const chat = tmuxChat('resolve', { columns: 200, rows: 60 })
const { screen, keys, type } = chat

afterEach(chat.close)
afterAll(removeScratch)

describe('maka chat /resolve', { timeout: 240_000 }, () => {
  it('lists the open call with the verdicts, records one, and /resume continues from it', async () => {
    const dirs = await scratch()
    const script = await scriptFile(dirs.root, 'bg.json', [
      { toolCall: { name: 'shell', args: { command: 'echo published > publish.log', background: true } } },
      { text: 'Started it.' },
    ])
    await killedDemoTurn(dirs, 's-tui', 'after_tool_dispatch_committed', {
      script,
      env: { MAKA_RUNTIME_TOOL_JOURNAL: '1' },
    })
    const [source] = await runHeaders(dirs.dataDir, 's-tui')
    const call = (await ledgerRows(dirs.dataDir, 's-tui', String(source?.['runId'])))
      .map((row) => row['content'] as { kind?: string; id?: string } | undefined)
      .find((c) => c?.kind === 'function_call')
    const callId = call?.id ?? '?'
    const cont = await scriptFile(dirs.root, 'cont.json', [{ text: 'Understood: it failed, so I stop here.' }])
    await chat.open(
      ['--data-dir', dirs.dataDir, '--session', 's-tui', '--cwd', dirs.workspace, '--script', cont],
      true,
      ['MAKA_RUNTIME_TOOL_JOURNAL=1'],
    )
    await waitFor('the offer', () => screen().includes('Interrupted turn found'), 60_000)
    keys('n')
    await waitFor('the offer to go', () => screen().includes('Not resumed; /resume continues it later.'), 60_000)

    type('/resolve')
    await waitFor('the open call', () => screen().includes(`- shell (call ${callId}, operation `), 60_000)
    await waitFor(
      'the command',
      () => screen().includes(`record it: /resolve ${callId} applied|not_applied|failed [text]`),
      60_000,
    )
    expect(screen()).toContain(': dispatched_outcome_unknown, mode never_auto_retry')
    expect(screen()).toContain(`failed: ${OperatorVerdictMeanings.failed}`)

    type(`/resolve ${callId} maybe`)
    await waitFor('the usage', () => screen().includes('Usage: /resolve'), 60_000)
    expect(await runHeaders(dirs.dataDir, 's-tui')).toHaveLength(1)

    type(`/resolve ${callId} failed the publish was rejected`)
    await waitFor('the record', () => screen().includes(`Recorded failed for call ${callId}`), 60_000)
    await waitFor('the way on', () => screen().includes('/resume continues the turn from this record.'), 60_000)
    const adjudication = (await runHeaders(dirs.dataDir, 's-tui')).find(
      (h) => h['failureClass'] === 'operator_resolved',
    )
    expect(adjudication).toBeDefined()
    const settled = (await ledgerRows(dirs.dataDir, 's-tui', String(adjudication?.['runId']))).find(
      (r) => (r['content'] as { kind?: string } | undefined)?.kind === 'function_response',
    )
    expect(settled).toMatchObject({
      author: 'user',
      content: { id: callId, result: 'the publish was rejected', isError: true },
    })
    expect(JSON.stringify(settled)).toContain('"actor":"tui"')

    type('/resume')
    await waitFor('the continuation', () => screen().includes('Understood: it failed, so I stop here.'), 90_000)
    const continuation = await waitFor(
      'the completed continuation',
      async () =>
        (await runHeaders(dirs.dataDir, 's-tui')).find(
          (h) => h['continuationSource'] !== undefined && h['status'] === 'completed',
        ),
      60_000,
    )
    const rows = await ledgerRows(dirs.dataDir, 's-tui', String(continuation['runId']))
    expect(rows.filter((r) => r['role'] === 'user')).toHaveLength(0)
    // The background command never ran: nothing was published.
    expect(await readdir(dirs.workspace)).not.toContain('publish.log')
  })
})
