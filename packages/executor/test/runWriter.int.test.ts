import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type AgentRun, type RuntimeEvent, makeTerminalEvent } from '@maka/events'
import { ledgerPath, makeFileStores, type FileStores } from '@maka/store-jsonl'
import { ioFailed } from '@maka/stores'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { makeRunWriter, type RunWriteFailure, type RunWriter } from '../src/runWriter.js'

const header = {
  runId: 'run-1',
  sessionId: 'session-1',
  turnId: 'turn-1',
  invocationId: 'inv-1',
  status: 'running',
  cwd: '/tmp',
  providerId: 'scripted',
  modelId: 'scripted',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
} as AgentRun

// The writer fails with a value; these cases expect every write to succeed.
const written = async <A>(write: TE.TaskEither<RunWriteFailure, A>): Promise<A> => {
  const result = await write()
  if (E.isLeft(result)) throw new Error(`${result.left.operation} failed: ${result.left.error.message}`)
  return result.right
}

describe('makeRunWriter', () => {
  let root: string
  let stores: FileStores
  let writer: RunWriter
  let seen: Array<RuntimeEvent>

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'maka-writer-'))
    stores = makeFileStores(join(root, 'data'))
    expect(E.isRight(await stores.runs.create(header)())).toBe(true)
    seen = []
    writer = makeRunWriter({
      stores,
      header,
      rowsBefore: 0,
      clock: () => new Date('2026-01-01T00:00:01.000Z'),
      observer: { onEvent: (e) => seen.push(e) },
    })
  })

  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  describe('when rows are appended before the terminal event', () => {
    it('stamps them with the run identity and sequential ids, and writes them', async () => {
      const first = await written(
        writer.append({ role: 'model', author: 'agent', content: { kind: 'text', text: 'a' } }),
      )
      const second = await written(
        writer.append({ role: 'model', author: 'agent', content: { kind: 'text', text: 'b' } }),
      )

      expect(first).toMatchObject({
        id: 'run-1-e1',
        sessionId: 'session-1',
        invocationId: 'inv-1',
        runId: 'run-1',
        turnId: 'turn-1',
        partial: false,
      })
      expect(second?.id).toBe('run-1-e2')
      const read = await stores.events.read('session-1', 'run-1')()
      expect(E.isRight(read) && read.right.events).toEqual([first, second])
    })
  })

  describe('when events arrive after the terminal event', () => {
    it('drains them: append returns null, nothing is written and nobody is told', async () => {
      await written(writer.append({ role: 'model', author: 'agent', content: { kind: 'text', text: 'answer' } }))
      const terminal = await written(
        writer.appendRow(makeTerminalEvent(header, writer.stamp(), { status: 'completed' }), {
          durable: true,
        }),
      )
      expect(terminal).not.toBeNull()
      expect(writer.terminated()).toBe(true)
      const bytes = await readFile(ledgerPath(stores.dataDir, 'session-1', 'run-1'))

      const late = await written(
        writer.append({ role: 'model', author: 'agent', content: { kind: 'text', text: 'late' } }),
      )
      const secondTerminal = await written(
        writer.appendRow(
          makeTerminalEvent(header, writer.stamp(), {
            status: 'failed',
            failureClass: 'runtime_error',
            message: 'late',
          }),
          { durable: true },
        ),
      )

      expect(late).toBeNull()
      expect(secondTerminal).toBeNull()
      expect(await readFile(ledgerPath(stores.dataDir, 'session-1', 'run-1'))).toEqual(bytes)
      expect(writer.committed()).toHaveLength(2)
      expect(seen.map((e) => e.id)).toEqual(['run-1-e1', 'run-1-e2'])
    })

    it('still lets the terminal header be written after the terminal event', async () => {
      await written(
        writer.appendRow(makeTerminalEvent(header, writer.stamp(), { status: 'completed' }), { durable: true }),
      )
      await written(writer.setStatus('completed', {}, { durable: true }))

      const read = await stores.runs.read('session-1', 'run-1')()
      expect(E.isRight(read) && read.right.status).toBe('completed')
    })
  })

  describe('when the store refuses a write', () => {
    const refused = ioFailed('append', '/data/x', Object.assign(new Error('full'), { code: 'ENOSPC' }))

    it('fails with the write and the store error as a value, and counts nothing', async () => {
      const refusing = makeRunWriter({
        stores: {
          ...stores,
          events: { ...stores.events, append: () => TE.left(refused) },
          runs: { ...stores.runs, update: () => TE.left(refused) },
        },
        header,
        rowsBefore: 0,
        clock: () => new Date('2026-01-01T00:00:01.000Z'),
        observer: { onEvent: (e) => seen.push(e) },
      })

      const appended = await refusing.append({ role: 'model', author: 'agent', content: { kind: 'text', text: 'a' } })()
      const status = await refusing.setStatus('completed')()

      expect(appended).toEqual(E.left({ _tag: 'RunWriteFailed', operation: 'append', error: refused }))
      expect(status).toEqual(E.left({ _tag: 'RunWriteFailed', operation: 'update header', error: refused }))
      expect(refusing.committed()).toEqual([])
      expect(refusing.header().status).toBe('running')
      expect(seen).toEqual([])
    })
  })
})
