import type { RuntimeEvent } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { describe, expect, it } from 'vitest'
import { materializeHistory, type ProviderMessage } from '../src/index.js'

const b = makeLedgerBuilderUnsafe()

interface Case {
  readonly name: string
  readonly given: ReadonlyArray<RuntimeEvent>
  readonly then: ReadonlyArray<ProviderMessage>
}

const cases: ReadonlyArray<Case> = [
  { name: 'an empty ledger gives no messages', given: [], then: [] },
  {
    name: 'user text becomes a user message and model text an assistant message',
    given: [b.userText('list the files'), b.modelText('Sure.')],
    then: [
      { role: 'user', text: 'list the files' },
      { role: 'assistant', text: 'Sure.', toolCalls: [] },
    ],
  },
  {
    name: 'consecutive model text and function calls merge into one assistant message, in order',
    given: [
      b.userText('go'),
      b.modelText('Let me '),
      b.modelText('look.'),
      b.functionCall('call-1', 'list_dir', { path: '.' }),
      b.functionCall('call-2', 'read_file', { path: 'a.txt' }),
    ],
    then: [
      { role: 'user', text: 'go' },
      {
        role: 'assistant',
        text: 'Let me look.',
        toolCalls: [
          { id: 'call-1', name: 'list_dir', args: { path: '.' } },
          { id: 'call-2', name: 'read_file', args: { path: 'a.txt' } },
        ],
      },
    ],
  },
  {
    name: 'a tool result becomes a tool message (isError false by default) and splits assistant messages',
    given: [
      b.functionCall('call-1', 'list_dir'),
      b.functionResponse('call-1', 'list_dir', { entries: ['a'] }),
      b.functionCall('call-2', 'shell', { command: 'false' }),
      b.functionResponse('call-2', 'shell', 'exit 1', true),
      b.modelText('Done.'),
    ],
    then: [
      { role: 'assistant', text: '', toolCalls: [{ id: 'call-1', name: 'list_dir', args: {} }] },
      { role: 'tool', toolCallId: 'call-1', name: 'list_dir', result: { entries: ['a'] }, isError: false },
      { role: 'assistant', text: '', toolCalls: [{ id: 'call-2', name: 'shell', args: { command: 'false' } }] },
      { role: 'tool', toolCallId: 'call-2', name: 'shell', result: 'exit 1', isError: true },
      { role: 'assistant', text: 'Done.', toolCalls: [] },
    ],
  },
  {
    name: 'partial rows, error facts, thinking and content-less rows are skipped without splitting a step',
    given: [
      b.userText('go'),
      b.partial(b.modelText('half an answ')),
      b.modelText('Checking.'),
      b.thinking('I should list the directory'),
      b.permissionRequest('req-1', 'list_dir', 'call-1'),
      b.functionCall('call-1', 'list_dir'),
      b.errorFact('something broke'),
      b.partial(b.functionResponse('call-1', 'list_dir')),
    ],
    then: [
      { role: 'user', text: 'go' },
      { role: 'assistant', text: 'Checking.', toolCalls: [{ id: 'call-1', name: 'list_dir', args: {} }] },
    ],
  },
  {
    name: 'lifecycle rows (continuation start, terminal) are not model-visible',
    given: [
      b.continuationStart({
        sourceInvocationId: 'invocation-0',
        sourceRunId: 'run-0',
        sourceTurnId: 'turn-0',
        sourceRuntimeEventHighWater: 3,
      } as Parameters<typeof b.continuationStart>[0]),
      b.userText('hi'),
      b.terminal(),
    ],
    then: [{ role: 'user', text: 'hi' }],
  },
  {
    name: 'two user messages in a row stay two messages',
    given: [b.userText('one'), b.userText('two')],
    then: [
      { role: 'user', text: 'one' },
      { role: 'user', text: 'two' },
    ],
  },
]

describe('materializeHistory', () => {
  describe('when given a ledger', () => {
    it.each(cases)('$name', ({ given, then }) => {
      expect(materializeHistory(given)).toEqual(then)
    })
  })

  describe('when given the same rows twice', () => {
    it('returns equal history and leaves the rows untouched', () => {
      const rows = [b.userText('go'), b.modelText('a'), b.functionCall('c', 'list_dir')]
      const copy = structuredClone(rows)
      expect(materializeHistory(rows)).toEqual(materializeHistory(rows))
      expect(rows).toEqual(copy)
    })
  })
})
