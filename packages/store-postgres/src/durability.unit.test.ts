/**
 * The PostgreSQL durability rule on the two settings it reads, as `SHOW` prints them: a session's
 * `SET synchronous_commit = off` after the store opened changes nothing (the rule runs at open), so
 * the rule itself is checked here on every value, and `durability.int.test.ts` checks that the
 * adapter applies it to what real servers report.
 */
import { describe, expect, it } from 'vitest'
import { isDurableCommit } from './durability.js'

describe('isDurableCommit', () => {
  it.each([
    ['on', 'on', true],
    ['local', 'on', true],
    ['remote_write', 'on', true],
    ['remote_apply', 'on', true],
    ['off', 'on', false],
    ['on', 'off', false],
    ['local', 'off', false],
    ['off', 'off', false],
  ] as const)('synchronous_commit=%s, fsync=%s → %s', (synchronousCommit, fsync, durable) => {
    expect(isDurableCommit({ synchronousCommit, fsync })).toBe(durable)
  })

  describe('when a value is not one SHOW prints', () => {
    it.each([
      ['ON', 'on'],
      ['true', 'on'],
      ['', 'on'],
      ['some_new_level', 'on'],
      ['on', 'ON'],
      ['on', 'true'],
      ['on', ''],
    ] as const)('synchronous_commit=%j, fsync=%j is not durable: unknown fails closed', (synchronousCommit, fsync) => {
      expect(isDurableCommit({ synchronousCommit, fsync })).toBe(false)
    })
  })
})
