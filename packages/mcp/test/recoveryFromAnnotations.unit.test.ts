/**
 * A tool's recovery mode from its annotations, and a server entry that may lower it, never raise it.
 */
import { describe, expect, it } from 'vitest'
import { recoveryFromAnnotations } from '../src/index.js'

describe('recoveryFromAnnotations', () => {
  describe('when the server entry says nothing', () => {
    it.each([
      { hints: { readOnlyHint: true }, mode: 'replay_safe', mutates: false, why: 'readOnlyHint: true' },
      {
        hints: { readOnlyHint: true, idempotentHint: true },
        mode: 'replay_safe',
        mutates: false,
        why: 'readOnlyHint: true',
      },
      {
        hints: { readOnlyHint: false, idempotentHint: true },
        mode: 'idempotent',
        mutates: true,
        why: 'idempotentHint: true',
      },
      {
        hints: { destructiveHint: true },
        mode: 'never_auto_retry',
        mutates: true,
        why: 'neither readOnlyHint nor idempotentHint',
      },
      { hints: undefined, mode: 'never_auto_retry', mutates: true, why: 'no annotations' },
    ])('$hints → $mode', ({ hints, mode, mutates, why }) => {
      expect(recoveryFromAnnotations('t', hints, {})).toEqual({ mode, mutates, why })
    })
  })

  describe('when the server entry names a mode', () => {
    it('lowers a read-only tool, which still asks no permission', () => {
      expect(recoveryFromAnnotations('t', { readOnlyHint: true }, { t: 'never_auto_retry' })).toEqual({
        mode: 'never_auto_retry',
        mutates: false,
        why: "readOnlyHint: true, lowered by the server entry's recovery.t",
      })
    })

    it('lowers every tool with "*", a tool of its own name first', () => {
      const entry = { '*': 'never_auto_retry', t: 'idempotent' } as const
      expect(recoveryFromAnnotations('t', { readOnlyHint: true }, entry).mode).toBe('idempotent')
      expect(recoveryFromAnnotations('u', { readOnlyHint: true }, entry).mode).toBe('never_auto_retry')
    })

    it.each([
      { hints: undefined, asked: 'replay_safe' },
      { hints: undefined, asked: 'idempotent' },
      { hints: { idempotentHint: true }, asked: 'replay_safe' },
    ] as const)('never raises $hints to $asked', ({ hints, asked }) => {
      const recovery = recoveryFromAnnotations('t', hints, { t: asked })
      expect(recovery.mode).toBe(hints === undefined ? 'never_auto_retry' : 'idempotent')
      expect(recovery.why).toContain('is ignored')
    })
  })
})
