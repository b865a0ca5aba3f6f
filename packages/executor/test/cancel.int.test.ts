import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type RuntimeEvent, isTerminalEvent } from '@maka/events'
import type { Tool } from '@maka/tools'
import type { Runtime, TurnResult } from '../src/index.js'
import { describeRow, trackWorlds, type World } from './support/world.js'

const world = trackWorlds()

const waitUntil = async (what: string, check: () => boolean): Promise<void> => {
  const end = Date.now() + 30_000
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const cancelledTurn = (result: TurnResult) => {
  if (result._tag !== 'Finished') throw new Error(`expected Finished, got ${JSON.stringify(result)}`)
  expect(result).toMatchObject({ status: 'cancelled', failureClass: 'user_interrupted' })
  return result
}

const expectCancelledEnd = async (w: World, sessionId: string, runId: string) => {
  const ledger = await w.ledger(sessionId, runId)
  const terminals = ledger.filter(isTerminalEvent)
  expect(terminals).toHaveLength(1)
  expect(ledger[ledger.length - 1]).toBe(terminals[0])
  expect(terminals[0]).toMatchObject({
    status: 'cancelled',
    actions: { endInvocation: true, stateDelta: { failureClass: 'user_interrupted' } },
    content: { kind: 'error', code: 'user_interrupted' },
  })
  expect(await w.header(sessionId, runId)).toMatchObject({ status: 'cancelled', failureClass: 'user_interrupted' })
  expect(existsSync(join(w.dataDir, 'sessions', sessionId, 'owner.lock'))).toBe(false)
  return ledger
}

/** A runtime whose observer collects committed rows, so a test can cancel at a chosen row. */
const observed = (w: World, extra: Parameters<World['runtimeWith']>[0] = {}) => {
  const rows: Array<RuntimeEvent> = []
  const runtime: Runtime = w.runtimeWith({ observer: { onEvent: (event) => rows.push(event) }, ...extra })
  return { rows, runtime }
}

describe('Runtime.cancel', () => {
  describe('when no run is active', () => {
    it('returns null and changes nothing', async () => {
      const w = await world()
      expect(w.runtime.cancel()).toBeNull()
    })
  })

  describe('when the model is streaming', () => {
    it('aborts the stream, commits one cancelled terminal, then the header, and releases the lock', async () => {
      const w = await world()
      w.script([{ delayMs: 600_000 }, { text: 'never said' }])
      const { rows, runtime } = observed(w)
      const pending = runtime.runTurn({ cwd: w.workspace, prompt: 'think slowly' })
      await waitUntil('the initial user row', () => rows.length === 1)

      const runId = runtime.cancel()
      const result = cancelledTurn(await pending)

      expect(runId).toBe(result.runId)
      const ledger = await expectCancelledEnd(w, result.sessionId, result.runId)
      expect(ledger.map(describeRow)).toEqual(['user text', 'terminal cancelled'])
    })
  })

  describe('when a tool is running', () => {
    it('lets it finish, commits its response, asks the model nothing more and ends cancelled', async () => {
      const w = await world()
      let runtime: Runtime | null = null
      const slow: Tool = {
        name: 'slow',
        description: 'Cancels its own run while it works, then finishes.',
        parameters: { type: 'object' },
        mutates: false,
        run: async () => {
          runtime?.cancel()
          await new Promise((r) => setTimeout(r, 50))
          return { result: 'finished anyway', isError: false }
        },
      }
      w.tools.push(slow)
      w.script([{ toolCall: { name: 'slow' } }, { toolCall: { name: 'slow' } }, { text: 'never said' }])
      runtime = w.runtimeWith()

      const result = cancelledTurn(await runtime.runTurn({ cwd: w.workspace, prompt: 'go' }))

      const ledger = await expectCancelledEnd(w, result.sessionId, result.runId)
      expect(ledger.map(describeRow)).toEqual([
        'user text',
        'model function_call',
        'tool function_response',
        'terminal cancelled',
      ])
      expect(w.requestsOf(result.runId)).toHaveLength(1)
    })

    it('kills a foreground shell command through its process group', async () => {
      const w = await world({ builtins: true })
      w.script([{ toolCall: { name: 'shell', args: { command: 'touch started && sleep 600' } } }, { text: 'never' }])
      const { runtime } = observed(w)
      const pending = runtime.runTurn({ cwd: w.workspace, prompt: 'sleep' })
      await waitUntil('the command to start', () => existsSync(join(w.workspace, 'started')))

      runtime.cancel()
      const result = cancelledTurn(await pending)

      const ledger = await expectCancelledEnd(w, result.sessionId, result.runId)
      const response = ledger.find((e) => e.content?.kind === 'function_response')
      expect(response?.content).toMatchObject({ name: 'shell', isError: true, result: { cancelled: true } })
    })
  })

  describe('when a permission question is pending', () => {
    it('denies it as the system, keeps the tool pair complete and ends cancelled', async () => {
      const w = await world({ permissionMode: 'ask' })
      w.script([{ toolCall: { name: 'mutate', args: {} } }, { text: 'never' }])
      let asked = false
      const { runtime } = observed(w, {
        permissionMode: 'ask',
        askPermission: () => {
          asked = true
          return new Promise(() => undefined)
        },
      })
      const pending = runtime.runTurn({ cwd: w.workspace, prompt: 'mutate' })
      await waitUntil('the question', () => asked)

      runtime.cancel()
      const result = cancelledTurn(await pending)

      const ledger = await expectCancelledEnd(w, result.sessionId, result.runId)
      const decision = ledger.find((e) => e.actions?.permissionDecision !== undefined)
      expect(decision).toMatchObject({ author: 'system', actions: { permissionDecision: { decision: 'deny' } } })
      expect(ledger.map(describeRow)).toEqual([
        'user text',
        'model function_call',
        'permission request',
        'permission deny',
        'tool function_response',
        'terminal cancelled',
      ])
      expect(w.runsOf('mutate')).toBe(0)
    })
  })

  describe('when a cancelled run ends at a complete tool pair', () => {
    it('is a boundary the planner continues', async () => {
      const w = await world()
      let runtime: Runtime | null = null
      w.tools.push({
        name: 'stopper',
        description: 'Cancels its own run.',
        parameters: { type: 'object' },
        mutates: false,
        run: () => {
          runtime?.cancel()
          return Promise.resolve({ result: 'done', isError: false })
        },
      })
      w.script([{ toolCall: { name: 'stopper' } }])
      runtime = w.runtimeWith()
      const result = cancelledTurn(await runtime.runTurn({ cwd: w.workspace, prompt: 'stop' }))

      const plan = await w.runtime.plan({ sessionId: result.sessionId })

      expect(plan.rejectionReasons).toEqual([])
      expect(plan).toMatchObject({ disposition: 'continue', sourceRunId: result.runId, sourceRuntimeEventHighWater: 4 })
    })
  })

  describe('when a continuation is running', () => {
    it('cancels it like a turn', async () => {
      const w = await world()
      let runtime: Runtime | null = null
      w.tools.push({
        name: 'stopper',
        description: 'Cancels its own run.',
        parameters: { type: 'object' },
        mutates: false,
        run: () => {
          runtime?.cancel()
          return Promise.resolve({ result: 'done', isError: false })
        },
      })
      w.script([{ toolCall: { name: 'stopper' } }], [{ delayMs: 600_000 }])
      const rows: Array<RuntimeEvent> = []
      runtime = w.runtimeWith({ observer: { onEvent: (event) => rows.push(event) } })
      const source = cancelledTurn(await runtime.runTurn({ cwd: w.workspace, prompt: 'stop' }))
      const plan = await runtime.plan({ sessionId: source.sessionId })
      const before = rows.length

      const pending = runtime.execute(plan)
      await waitUntil('the continuation-start row', () => rows.length > before)
      runtime.cancel()
      const result = await pending

      expect(result).toMatchObject({ _tag: 'Finished', status: 'cancelled', failureClass: 'user_interrupted' })
      const targetRunId = result._tag === 'Finished' ? result.targetRunId : ''
      const ledger = await expectCancelledEnd(w, source.sessionId, targetRunId)
      expect(ledger.map(describeRow)).toEqual(['continuation start', 'terminal cancelled'])
    })
  })
})
