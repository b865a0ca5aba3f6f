/**
 * How `show` and the event stream name the tool journal's rows (Phase 2): a dispatch names its tool,
 * mode and attempt; a response that settled an operation says how it came about. Never args.
 */
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { describe, expect, it } from 'vitest'
import { formatSummary, summarizeEvent } from '../src/eventSummary.js'

describe('summarizeEvent and the tool journal', () => {
  const l = makeLedgerBuilderUnsafe()
  l.protocolUserText('go')
  const call = l.protocolCall('call-1', 'write_file', { path: 'secret.txt', content: 'hunter2' })

  it('names a dispatch by its tool, mode and attempt, and nothing of its args', () => {
    const dispatch = l.dispatch(call, 'reconcile', 2, { reconcileBasis: 'absent', priorVerdict: 'not_applied' })
    const line = formatSummary(summarizeEvent(dispatch))
    expect(line).toBe('system tool_dispatch       write_file (reconcile, attempt 2, probe: not applied)')
    expect(line).not.toContain('secret')
  })

  it.each([
    ['normal_t2', 'write_file ok'],
    ['reconcile_applied', 'write_file ok (found applied)'],
    ['reattached', 'write_file ok (reattached)'],
  ] as const)('says how a %s response came about', (origin, text) => {
    expect(summarizeEvent(l.outcome(call, origin, { isError: false })).text).toBe(text)
  })

  it('tells a refusal before the tool started from a tool that failed', () => {
    expect(summarizeEvent(l.outcome(call, 'pre_t1_synthetic')).text).toBe('write_file error (not run)')
  })
})
