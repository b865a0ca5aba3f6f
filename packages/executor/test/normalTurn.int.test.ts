import { existsSync } from 'node:fs'
import { readFile, realpath, stat } from 'node:fs/promises'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { describe, expect, it } from 'vitest'
import { type RuntimeEvent, isTerminalEvent } from '@maka/events'
import type { FileStores } from '@maka/store-jsonl'
import type { Tool } from '@maka/tools'
import type { PermissionQuestion, TurnResult } from '../src/index.js'
import { describeRow, trackWorlds, ioFailure, ledgerLines, tracingWrites, type World } from './support/world.js'

const world = trackWorlds()

const finished = (result: TurnResult) => {
  if (result._tag !== 'Finished') throw new Error(`expected Finished, got ${JSON.stringify(result)}`)
  return result
}

describe('runTurn', () => {
  describe('when the provider sends a tool call without an id', () => {
    it('fails the step as a protocol error, writes no call row and runs no tool', async () => {
      const w = await world()
      const result = finished(
        await w
          .runtimeWith({
            providerFor: () => ({
              providerId: 'scripted',
              modelId: 'scripted',
              async *stream() {
                yield { type: 'tool_call', id: '', name: 'count', args: { label: 'x' } }
              },
            }),
          })
          .runTurn({ cwd: w.workspace, prompt: 'count' }),
      )

      expect(result).toMatchObject({ status: 'failed', failureClass: 'provider_protocol_error' })
      const ledger = await w.ledger(result.sessionId, result.runId)
      expect(ledger.some((row) => row.content?.kind === 'function_call')).toBe(false)
      expect(w.runsOf('count')).toBe(0)
    })
  })

  describe('when a turn calls a tool and answers', () => {
    it('writes header, initial user row, running, model/tool rows, terminal row, terminal header — in that order', async () => {
      const w = await world()
      w.script([{ toolCall: { name: 'count', args: { label: 'x' } } }, { text: 'Counted.' }])
      const trace: Array<string> = []

      const result = finished(
        await w.runtimeWith({ wrapStores: tracingWrites(trace) }).runTurn({ cwd: w.workspace, prompt: 'count' }),
      )

      expect(result.status).toBe('completed')
      expect(trace).toEqual([
        'header created',
        'row user text (durable)',
        'header running',
        'row model function_call',
        'row tool function_response',
        'row model text',
        'row terminal completed (durable)',
        'header completed (durable)',
      ])
      const header = await w.header(result.sessionId, result.runId)
      expect(header).toMatchObject({ status: 'completed', providerId: 'scripted', modelId: 'scripted' })
      expect(header.completedAt).toBeDefined()
      expect(header.failureClass).toBeUndefined()
      const ledger = await w.ledger(result.sessionId, result.runId)
      expect(ledger[0]).toMatchObject({ role: 'user', author: 'user', content: { kind: 'text', text: 'count' } })
      expect(
        ledger.every(
          (e) => e.runId === result.runId && e.turnId === header.turnId && e.invocationId === header.invocationId,
        ),
      ).toBe(true)
      expect(w.runsOf('count')).toBe(1)
    })

    it('commits the function_call row before the tool starts', async () => {
      const w = await world()
      const sightings: Array<{ ownCall: boolean; ownResponse: boolean }> = []
      const peek: Tool = {
        name: 'peek',
        description: 'Reads the ledger of its own run.',
        parameters: { type: 'object' },
        mutates: false,
        run: async (_args, context) => {
          const lines = await ledgerLines(w.ledgerPathOf(context.sessionId, context.runId))
          const rows = lines.map((line) => JSON.parse(line) as RuntimeEvent)
          sightings.push({
            ownCall: rows.some((r) => r.content?.kind === 'function_call' && r.content.id === context.toolCallId),
            ownResponse: rows.some(
              (r) => r.content?.kind === 'function_response' && r.content.id === context.toolCallId,
            ),
          })
          return { result: 'peeked', isError: false }
        },
      }
      w.tools.push(peek)
      w.script([{ toolCall: { name: 'peek' } }, { text: 'ok' }])

      finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'peek' }))

      expect(sightings).toEqual([{ ownCall: true, ownResponse: false }])
    })
  })

  describe('when a host observes the run', () => {
    it('is told every committed row, in ledger order, and every streamed text delta', async () => {
      const w = await world()
      const seen: Array<RuntimeEvent> = []
      const deltas: Array<string> = []
      w.script([{ toolCall: { name: 'count' } }, { text: 'one two three' }])

      const result = finished(
        await w
          .runtimeWith({ observer: { onEvent: (e) => seen.push(e), onTextDelta: (_runId, text) => deltas.push(text) } })
          .runTurn({ cwd: w.workspace, prompt: 'count' }),
      )

      expect(seen).toEqual(await w.ledger(result.sessionId, result.runId))
      expect(deltas.join('')).toBe('one two three')
    })

    it('finishes the run even when the observer throws on every call', async () => {
      const w = await world()
      w.script([{ toolCall: { name: 'count' } }, { text: 'done' }])
      const boom = () => {
        throw new Error('ui bug')
      }

      const result = await w
        .runtimeWith({ observer: { onEvent: boom, onTextDelta: boom } })
        .runTurn({ cwd: w.workspace, prompt: 'count' })

      expect(result).toMatchObject({ _tag: 'Finished', status: 'completed' })
    })
  })

  describe('when the model never stops calling tools', () => {
    it('ends the run as failed runtime_error after maxModelSteps', async () => {
      const w = await world()
      w.script(Array.from({ length: 5 }, () => ({ toolCall: { name: 'count' } })))

      const result = finished(await w.runtimeWith({ maxModelSteps: 3 }).runTurn({ cwd: w.workspace, prompt: 'loop' }))

      expect(result).toMatchObject({ status: 'failed', failureClass: 'runtime_error' })
      expect(w.runsOf('count')).toBe(3)
      expect(w.requests).toHaveLength(3)
    })
  })

  describe('when a mutating tool is called under each permission mode', () => {
    it('allow: records the request and an allow decision, then runs the tool', async () => {
      const w = await world({ permissionMode: 'allow' })
      w.script([{ toolCall: { name: 'mutate' } }, { text: 'ok' }])

      const result = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'mutate' }))

      const rows = await w.ledger(result.sessionId, result.runId)
      const call = rows.find((r) => r.content?.kind === 'function_call')
      const toolCallId = call?.content?.kind === 'function_call' ? call.content.id : 'missing'
      expect(rows.map(describeRow)).toEqual([
        'user text',
        'model function_call',
        'permission request',
        'permission allow',
        'tool function_response',
        'model text',
        'terminal completed',
      ])
      expect(rows[2]?.actions?.permissionRequest).toEqual({
        requestId: `perm-${toolCallId}`,
        toolName: 'mutate',
        toolCallId,
      })
      expect(rows[3]?.actions?.permissionDecision).toEqual({ requestId: `perm-${toolCallId}`, decision: 'allow' })
      // A decision is a system fact (the mode decided), never a user message.
      expect(rows[3]).toMatchObject({ role: 'system', author: 'system' })
      expect(rows[4]?.content).toEqual({
        kind: 'function_response',
        id: toolCallId,
        name: 'mutate',
        result: { count: 1 },
      })
      expect(w.runsOf('mutate')).toBe(1)
    })

    it('records the mode in the run header', async () => {
      const w = await world({ permissionMode: 'deny' })
      w.script([{ text: 'ok' }])
      const result = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'hello' }))
      expect((await w.header(result.sessionId, result.runId)).permissionMode).toBe('deny')
    })

    it('deny: answers the call with an error and never runs the tool', async () => {
      const w = await world({ permissionMode: 'deny' })
      w.script([{ toolCall: { name: 'mutate' } }, { text: 'ok' }])

      const result = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'mutate' }))

      const rows = await w.ledger(result.sessionId, result.runId)
      expect(rows.map(describeRow)).toContain('permission deny')
      const response = rows.find((r) => r.content?.kind === 'function_response')
      expect(response?.content).toMatchObject({ kind: 'function_response', name: 'mutate', isError: true })
      expect(w.runsOf('mutate')).toBe(0)
      // A read-only tool needs no permission, even under deny.
      expect(rows.some((r) => r.actions?.permissionRequest?.toolName === 'count')).toBe(false)
    })

    it('ask: the header is waiting_permission while the user is asked, and the answer is recorded', async () => {
      const questions: Array<{ question: PermissionQuestion; statusWhileAsking: string }> = []
      const w: World = await world({
        permissionMode: 'ask',
        askPermission: async (question) => {
          const path = w.headerPathOf(question.sessionId, question.runId)
          const header = JSON.parse(await readFile(path, 'utf8')) as { status: string }
          questions.push({ question, statusWhileAsking: header.status })
          return 'allow'
        },
      })
      w.script([{ toolCall: { name: 'mutate' } }, { text: 'ok' }])

      const result = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'mutate' }))

      expect(questions).toHaveLength(1)
      expect(questions[0]?.statusWhileAsking).toBe('waiting_permission')
      expect(questions[0]?.question).toMatchObject({
        sessionId: result.sessionId,
        runId: result.runId,
        toolName: 'mutate',
      })
      const rows = await w.ledger(result.sessionId, result.runId)
      expect(rows.find((r) => r.actions?.permissionDecision !== undefined)?.actions?.permissionDecision).toEqual({
        requestId: questions[0]?.question.requestId,
        decision: 'allow',
      })
      expect(rows.find((r) => r.actions?.permissionDecision !== undefined)).toMatchObject({
        role: 'system',
        author: 'user',
      })
      expect(w.runsOf('mutate')).toBe(1)
      expect((await w.header(result.sessionId, result.runId)).status).toBe('completed')
    })

    it('ask without anyone to ask: denies', async () => {
      const w = await world({ permissionMode: 'ask' })
      w.script([{ toolCall: { name: 'mutate' } }, { text: 'ok' }])

      const result = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'mutate' }))

      expect((await w.ledger(result.sessionId, result.runId)).map(describeRow)).toContain('permission deny')
      expect(w.runsOf('mutate')).toBe(0)
    })
  })

  describe('when the safe-boundary feature flag is off', () => {
    // Decision 189 (issue 24): a turn records its workspace identity whatever the flag, so a crash of
    // a turn run without it can be resumed once it is on; the host inspector still never runs.
    it('records the workspace identity all the same, and never runs the inspector', async () => {
      const w = await world({ flag: false })
      let inspections = 0
      const runtime = w.runtimeWith({
        inspector: {
          ...w.inspector,
          inspect: (input) => {
            inspections += 1
            return w.inspector.inspect(input)
          },
        },
      })

      const result = finished(await runtime.runTurn({ cwd: w.workspace, prompt: 'hello' }))

      const header = await w.header(result.sessionId, result.runId)
      const canonical = await realpath(w.workspace)
      const s = await stat(canonical, { bigint: true })
      expect(header.workspaceIdentity).toBe(`fs:${s.dev}:${s.ino}:${canonical}`)
      expect(inspections).toBe(0)
    })
  })

  describe('when the safe-boundary feature flag is on', () => {
    it('records the workspace identity fs:<dev>:<ino>:<realpath> and the canonical cwd', async () => {
      const w = await world({ flag: true })

      const result = finished(await w.runtime.runTurn({ cwd: `${w.workspace}/`, prompt: 'hello' }))

      const header = await w.header(result.sessionId, result.runId)
      const canonical = await realpath(w.workspace)
      const s = await stat(canonical, { bigint: true })
      expect(header.cwd).toBe(canonical)
      expect(header.workspaceIdentity).toBe(`fs:${s.dev}:${s.ino}:${canonical}`)
      expect(header.workspaceIdentity?.startsWith('fs:')).toBe(true)
    })
  })

  describe('when the terminal row cannot be written', () => {
    it('never writes a terminal header; recovery closes the run as app_restarted', async () => {
      const w = await world()
      w.script([{ text: 'hi' }])
      const failingTerminal = (s: FileStores): FileStores => ({
        ...s,
        events: {
          ...s.events,
          append: (sessionId, runId, event, o) =>
            isTerminalEvent(event) ? TE.left(ioFailure('append')) : s.events.append(sessionId, runId, event, o),
        },
      })

      const result = await w.runtimeWith({ wrapStores: failingTerminal }).runTurn({ cwd: w.workspace, prompt: 'hello' })

      expect(result._tag).toBe('Interrupted')
      if (result._tag !== 'Interrupted') return
      expect((await w.header(result.sessionId, result.runId)).status).toBe('running')
      expect((await w.ledger(result.sessionId, result.runId)).filter(isTerminalEvent)).toEqual([])
      await w.runtime.recover()
      expect(await w.header(result.sessionId, result.runId)).toMatchObject({
        status: 'failed',
        failureClass: 'app_restarted',
      })
    })
  })

  describe('when the terminal header cannot be written', () => {
    it('leaves the durable terminal row; recovery repairs the header from it', async () => {
      const w = await world()
      w.script([{ text: 'hi' }])
      const failingTerminalHeader = (s: FileStores): FileStores => ({
        ...s,
        runs: {
          ...s.runs,
          update: (run, o) => (run.status === 'completed' ? TE.left(ioFailure('update')) : s.runs.update(run, o)),
        },
      })

      const result = await w
        .runtimeWith({ wrapStores: failingTerminalHeader })
        .runTurn({ cwd: w.workspace, prompt: 'hello' })

      expect(result._tag).toBe('Interrupted')
      if (result._tag !== 'Interrupted') return
      expect((await w.header(result.sessionId, result.runId)).status).toBe('running')
      const report = await w.runtime.recover()
      expect(report.actions).toContainEqual(expect.objectContaining({ runId: result.runId, action: 'header_repaired' }))
      expect((await w.header(result.sessionId, result.runId)).status).toBe('completed')
    })
  })

  describe('when the session id is not path-safe', () => {
    it('refuses before touching the data dir', async () => {
      const w = await world()

      const result = await w.runtime.runTurn({ sessionId: '../escape', cwd: w.workspace, prompt: 'hello' })

      expect(result).toMatchObject({ _tag: 'Refused', code: 'invalid_id' })
      expect(existsSync(w.dataDir)).toBe(false)
      expect(w.requests).toEqual([])
    })
  })

  describe('when the provider fails', () => {
    it('ends the run with a failed provider_error terminal event and a failed header', async () => {
      const w = await world()
      w.script([{ error: 'upstream exploded' }])

      const result = finished(await w.runtime.runTurn({ cwd: w.workspace, prompt: 'hello' }))

      expect(result).toMatchObject({ status: 'failed', failureClass: 'provider_error' })
      const rows = await w.ledger(result.sessionId, result.runId)
      const last = rows[rows.length - 1]
      expect(rows.filter(isTerminalEvent)).toHaveLength(1)
      expect(last).toMatchObject({
        status: 'failed',
        role: 'system',
        author: 'system',
        content: { kind: 'error', code: 'provider_error' },
        actions: { endInvocation: true, stateDelta: { failureClass: 'provider_error' } },
      })
      // Provider error text never lands in the ledger.
      expect(JSON.stringify(rows)).not.toContain('upstream exploded')
      expect(await w.header(result.sessionId, result.runId)).toMatchObject({
        status: 'failed',
        failureClass: 'provider_error',
      })
    })
  })
})
