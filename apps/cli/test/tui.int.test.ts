/**
 * `maka chat` driven through a real pseudo-terminal (tmux): `/resume` shows its notice, streams the
 * continuation into the transcript without submitting a user prompt, a park shows the sentence of
 * every reason, and `/resume extra` prints its usage.
 */
import { dirname } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ParkReasonSentences } from '@maka/events'
import {
  interruptedSession,
  json,
  ledgerRows,
  removeLater,
  removeScratch,
  runCli,
  runHeaders,
  scratch,
  scriptFile,
  tmuxChat,
  waitFor,
} from './support.js'

const chat = tmuxChat('test', { columns: 120, rows: 40 })
const { screen, type } = chat
const openChat = (args: ReadonlyArray<string>, flag: boolean) => chat.open(args, flag)

describe('maka chat in a terminal', () => {
  let env: Awaited<ReturnType<typeof scratch>>

  beforeAll(async () => {
    env = await scratch()
  })

  afterEach(chat.close)

  afterAll(removeScratch)

  describe('when /resume continues an interrupted turn', () => {
    it('shows the notice, streams the continuation and submits no user prompt', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'tui', env.root)
      const script = await scriptFile(env.root, 'tui-cont.json', [
        { text: 'Continuing the listing from the safe boundary.' },
      ])
      await openChat(['--data-dir', env.dataDir, '--session', 'tui', '--script', script], true)

      type('/resume extra')
      await waitFor('the usage line', () => screen().includes('Usage: /resume'))
      expect(screen()).not.toContain('Resuming from the latest safe boundary')

      type('/resume')
      await waitFor('the resume notice', () => screen().includes('Resuming from the latest safe boundary'))
      await waitFor('the continuation text', () =>
        screen().includes('maka › Continuing the listing from the safe boundary.'),
      )
      await waitFor('the end of the continuation', () => /ended: completed/.test(screen()))
      // The reopened session shows its earlier prompt above (issue 24); nothing is submitted after the notice.
      expect(screen().split('Resuming from the latest safe boundary')[1]).not.toContain('you ›')

      // The screen shows the end from the terminal event, which is committed before the terminal
      // header: wait for the header instead of reading it at once.
      const headers = await waitFor('the terminal header of the continuation', async () => {
        const all = await runHeaders(env.dataDir, 'tui')
        const done = all.find(
          (h) =>
            h['continuationSource'] !== undefined && ['completed', 'failed', 'cancelled'].includes(String(h['status'])),
        )
        return done === undefined ? undefined : all
      })
      expect(headers).toHaveLength(2)
      const continuation = headers.find((h) => h['continuationSource'] !== undefined)
      expect(continuation?.['status']).toBe('completed')
      const rows = await ledgerRows(env.dataDir, 'tui', String(continuation?.['runId']))
      expect(rows.filter((r) => r['role'] === 'user')).toEqual([])
    })
  })

  describe('when /resume parks', () => {
    it('prints the human sentence of every reason', async () => {
      const { dataDir } = await scratch()
      // Without the tool journal a crash after a function call parks (dangling_tool_state).
      const demo = await runCli(['demo', '--at', 'after_function_call', '--data-dir', dataDir, '--json'], {
        env: { MAKA_RUNTIME_TOOL_JOURNAL: '0' },
      })
      expect(demo.code).toBe(0)
      const { sessionId, plan, workspace } = json<{
        sessionId: string
        workspace: string
        plan: { rejectionReasons: ReadonlyArray<keyof typeof ParkReasonSentences> }
      }>(demo)
      removeLater(dirname(workspace))
      const { rejectionReasons } = plan
      expect(rejectionReasons).toContain('dangling_tool_state')

      await openChat(['--data-dir', dataDir, '--session', sessionId], true)
      type('/resume')
      await waitFor('the park', () => screen().includes('Cannot resume:'))
      const text = screen()
      for (const reason of rejectionReasons) expect(text).toContain(ParkReasonSentences[reason])
      expect(await runHeaders(dataDir, sessionId)).toHaveLength(1)
    })

    it('parks with resume_feature_disabled when the flag is off', async () => {
      await interruptedSession(env.dataDir, env.workspace, 'tui-off', env.root)
      await openChat(['--data-dir', env.dataDir, '--session', 'tui-off'], false)
      type('/resume')
      await waitFor('the park', () => screen().includes(ParkReasonSentences.resume_feature_disabled))
      expect(await runHeaders(env.dataDir, 'tui-off')).toHaveLength(1)
    })
  })
})
