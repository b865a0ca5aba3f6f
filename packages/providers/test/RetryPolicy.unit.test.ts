import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import {
  DEFAULT_RETRY_POLICY,
  NO_RETRY,
  type ProviderFailure,
  type RetryPolicy,
  decideRetry,
  isTransientFailure,
  parseRetryAfter,
  providerFailure,
  readRetryPolicy,
} from '../src/index.js'

const policy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 1_000, maxDelayMs: 3_000, maxWaitMs: 10_000 }
const http = (status: number, retryAfterMs?: number): ProviderFailure =>
  providerFailure('http_error', `HTTP ${status}`, status, retryAfterMs)

describe('RetryPolicy', () => {
  describe('isTransientFailure', () => {
    it.each<[string, ProviderFailure, boolean]>([
      ['HTTP 429', http(429), true],
      ['HTTP 500', http(500), true],
      ['HTTP 503', http(503), true],
      ['HTTP 408', http(408), true],
      ['HTTP 400', http(400), false],
      ['HTTP 401', http(401), false],
      ['a stalled stream', providerFailure('timeout', 't'), true],
      ['a dropped stream', providerFailure('connection_lost', 'c'), true],
      ['an unreachable endpoint', providerFailure('unreachable', 'u'), false],
      ['a bad response', providerFailure('bad_response', 'b'), false],
      ['a stream error event', providerFailure('stream_error', 's'), false],
      ['an abort', providerFailure('aborted', 'a'), false],
      ['a scripted error', providerFailure('scripted_error', 'x'), false],
    ])('%s → %s', (_what, failure, transient) => {
      expect(isTransientFailure(failure)).toBe(transient)
    })
  })

  describe('decideRetry', () => {
    describe('when the failure is transient and tries are left', () => {
      it('waits between half and all of base · 2^(tries-1), capped by maxDelayMs', () => {
        expect(decideRetry(policy, http(500), { attempts: 1, waitedMs: 0 }, 0)).toEqual({ _tag: 'Retry', delayMs: 500 })
        expect(decideRetry(policy, http(500), { attempts: 1, waitedMs: 0 }, 0.999_999)).toEqual({
          _tag: 'Retry',
          delayMs: 1_000,
        })
        expect(decideRetry(policy, http(500), { attempts: 2, waitedMs: 0 }, 0.5)).toEqual({
          _tag: 'Retry',
          delayMs: 1_500,
        })
        expect(decideRetry(policy, http(500), { attempts: 3, waitedMs: 0 }, 1)).toEqual({
          _tag: 'Retry',
          delayMs: 3_000,
        })
      })

      it('shortens a computed wait to what is left of maxWaitMs', () => {
        expect(decideRetry(policy, http(502), { attempts: 3, waitedMs: 9_800 }, 1)).toEqual({
          _tag: 'Retry',
          delayMs: 200,
        })
      })

      it('waits exactly as long as Retry-After says, whatever the backoff would be', () => {
        expect(decideRetry(policy, http(429, 4_000), { attempts: 1, waitedMs: 0 }, 0)).toEqual({
          _tag: 'Retry',
          delayMs: 4_000,
        })
        expect(decideRetry(policy, http(429, 0), { attempts: 1, waitedMs: 0 }, 0)).toEqual({
          _tag: 'Retry',
          delayMs: 0,
        })
      })
    })

    describe('when it must give up', () => {
      it.each<[string, ProviderFailure, { attempts: number; waitedMs: number }, string]>([
        ['a failure that is not transient', http(400), { attempts: 1, waitedMs: 0 }, 'not_transient'],
        ['the last try failed', http(500), { attempts: 4, waitedMs: 0 }, 'attempts_exhausted'],
        ['all the waiting is spent', http(500), { attempts: 2, waitedMs: 10_000 }, 'wait_exhausted'],
        [
          'Retry-After is longer than what is left',
          http(429, 8_000),
          { attempts: 1, waitedMs: 3_000 },
          'retry_after_too_long',
        ],
      ])('gives up on %s', (_what, failure, progress, reason) => {
        expect(decideRetry(policy, failure, progress, 0.5)).toEqual({ _tag: 'GiveUp', reason })
      })

      it('never tries again under NO_RETRY', () => {
        expect(decideRetry(NO_RETRY, http(503), { attempts: 1, waitedMs: 0 }, 0)).toEqual({
          _tag: 'GiveUp',
          reason: 'attempts_exhausted',
        })
      })
    })
  })

  describe('parseRetryAfter', () => {
    const now = Date.parse('2026-12-05T10:00:00Z')
    it.each<[string, { retryAfter: string | null; retryAfterMs?: string | null }, number | undefined]>([
      ['whole seconds', { retryAfter: '3' }, 3_000],
      ['zero seconds', { retryAfter: '0' }, 0],
      ['an HTTP date', { retryAfter: 'Sat, 05 Dec 2026 10:00:05 GMT' }, 5_000],
      ['an HTTP date in the past', { retryAfter: 'Sat, 05 Dec 2026 09:59:00 GMT' }, 0],
      ['retry-after-ms first', { retryAfter: '9', retryAfterMs: '250' }, 250],
      ['nothing', { retryAfter: null }, undefined],
      ['an unreadable value', { retryAfter: 'soon' }, undefined],
      ['a negative number', { retryAfter: '-4' }, undefined],
    ])('reads %s', (_what, headers, expected) => {
      expect(parseRetryAfter(headers, now)).toBe(expected)
    })
  })

  describe('readRetryPolicy', () => {
    it('falls back to the defaults', () => {
      expect(readRetryPolicy({})).toEqual(E.right(DEFAULT_RETRY_POLICY))
    })

    it('reads the three variables', () => {
      expect(
        readRetryPolicy({
          MAKA_PROVIDER_MAX_ATTEMPTS: '2',
          MAKA_PROVIDER_RETRY_BASE_MS: '10',
          MAKA_PROVIDER_RETRY_MAX_WAIT_MS: '50',
        }),
      ).toEqual(
        E.right({ maxAttempts: 2, baseDelayMs: 10, maxDelayMs: DEFAULT_RETRY_POLICY.maxDelayMs, maxWaitMs: 50 }),
      )
    })

    it.each([
      ['MAKA_PROVIDER_MAX_ATTEMPTS', '0'],
      ['MAKA_PROVIDER_MAX_ATTEMPTS', 'many'],
      ['MAKA_PROVIDER_RETRY_BASE_MS', '-1'],
      ['MAKA_PROVIDER_RETRY_MAX_WAIT_MS', '1.5'],
    ])('refuses %s=%s with a sentence naming it', (name, value) => {
      const read = readRetryPolicy({ [name]: value })
      expect(E.isLeft(read) && read.left.message.startsWith(`${name} must be`)).toBe(true)
    })
  })
})
