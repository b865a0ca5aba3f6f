import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { makeRunGuard } from '../src/runGuard.js'

const boundary = { sessionId: 's-1', sourceRunId: 'run-1', sourceRuntimeEventHighWater: 3, runId: 'run-2' }

describe('runGuard', () => {
  it('holds one active run; a turn refused while busy spends no run id', () => {
    const guard = makeRunGuard()
    const first = guard.enterTurn(() => 'run-a')
    expect(E.isRight(first)).toBe(true)
    let asked = false
    const second = guard.enterTurn(() => {
      asked = true
      return 'run-b'
    })
    expect(second).toEqual(E.left('another_run_active'))
    expect(asked).toBe(false)
    expect(guard.enterContinuation(boundary)).toEqual(E.left('another_run_active'))
    if (E.isRight(first)) first.right.release()
    expect(E.isRight(guard.enterTurn(() => 'run-c'))).toBe(true)
  })

  const claims: ReadonlyArray<readonly [string, Partial<typeof boundary>, string]> = [
    ['the same boundary', {}, 'continuation_in_progress'],
    [
      'another boundary of the same session',
      { sourceRuntimeEventHighWater: 9, runId: 'run-3' },
      'continuation_in_progress',
    ],
    ['a boundary of another session', { sessionId: 's-2', runId: 'run-3' }, 'another_run_active'],
  ]
  for (const [name, other, code] of claims) {
    it(`a claim in flight refuses ${name} with ${code}`, () => {
      const guard = makeRunGuard()
      const held = guard.enterContinuation(boundary)
      expect(E.isRight(held)).toBe(true)
      expect(guard.enterContinuation({ ...boundary, ...other })).toEqual(E.left(code))
      if (E.isRight(held)) held.right.release()
      expect(E.isRight(guard.enterContinuation({ ...boundary, ...other }))).toBe(true)
    })
  }

  it('cancel aborts the active run and names it; with none active it does nothing', () => {
    const guard = makeRunGuard()
    expect(guard.cancel()).toBeNull()
    const held = guard.enterContinuation(boundary)
    if (E.isLeft(held)) throw new Error('not entered')
    expect(held.right.signal.aborted).toBe(false)
    expect(guard.cancel()).toBe('run-2')
    expect(held.right.signal.aborted).toBe(true)
    held.right.release()
    expect(guard.cancel()).toBeNull()
  })
})
