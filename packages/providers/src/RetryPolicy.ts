/**
 * When a failed model step is tried again, and after how long. A rate limit (HTTP 429), a server
 * error (5xx), a stalled stream and a dropped stream are usually gone a little later; anything else
 * (a refused key, a bad request, an answer that is not a chat completion) would fail the same way
 * again. The waits grow exponentially with jitter, an endpoint's `Retry-After` wins over them, and
 * both the number of tries and the time spent waiting are bounded. Pure: the run loop sleeps, and
 * hands in the random number and the clock.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { ProviderFailure, RetryPolicy } from './ModelProvider.js'
import { type ProviderChoiceError, providerChoiceError } from './ProviderChoiceError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What to do after a failed try: wait `delayMs` and try again, or give up (`reason` says why).
 * @category models
 */
export type RetryDecision =
  | { readonly _tag: 'Retry'; readonly delayMs: number }
  | {
      readonly _tag: 'GiveUp'
      readonly reason: 'not_transient' | 'attempts_exhausted' | 'wait_exhausted' | 'retry_after_too_long'
    }

/**
 * The policy of the OpenAI-compatible provider unless told otherwise: 5 tries, waits from about 1 s
 * doubling up to 30 s each, at most 2 minutes of waiting in all.
 * @category models
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxWaitMs: 120_000,
}

/**
 * A policy that never tries a step again.
 * @category models
 */
export const NO_RETRY: RetryPolicy = { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0, maxWaitMs: 0 }

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * True for a failure a later try of the same request may not meet: HTTP 408, 429 or 5xx, no answer
 * or a stalled stream (`timeout`), a stream cut off mid-answer (`connection_lost`).
 * @category guards
 */
export const isTransientFailure = (failure: ProviderFailure): boolean => {
  switch (failure.code) {
    case 'http_error':
      return failure.status === 408 || failure.status === 429 || (failure.status ?? 0) >= 500
    case 'timeout':
    case 'connection_lost':
      return true
    case 'unreachable':
    case 'bad_response':
    case 'stream_error':
    case 'scripted_error':
    case 'aborted':
      return false
  }
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Decides whether the step that just failed with `failure` is tried again. `attempts` is the number
 * of tries made so far (≥ 1), `waitedMs` the time already spent waiting between them, `random` a
 * number in [0, 1). A computed wait is `min(maxDelayMs, baseDelayMs · 2^(attempts-1))`, jittered to
 * between its half and its whole, and shortened to what is left of `maxWaitMs`; a `Retry-After`
 * is waited exactly, and one longer than what is left gives up at once (an earlier try would be
 * refused again).
 * @category constructors
 */
export const decideRetry = (
  policy: RetryPolicy,
  failure: ProviderFailure,
  progress: { readonly attempts: number; readonly waitedMs: number },
  random: number,
): RetryDecision => {
  if (!isTransientFailure(failure)) return { _tag: 'GiveUp', reason: 'not_transient' }
  if (progress.attempts >= policy.maxAttempts) return { _tag: 'GiveUp', reason: 'attempts_exhausted' }
  const left = policy.maxWaitMs - progress.waitedMs
  if (failure.retryAfterMs !== undefined) {
    return failure.retryAfterMs > left
      ? { _tag: 'GiveUp', reason: 'retry_after_too_long' }
      : { _tag: 'Retry', delayMs: failure.retryAfterMs }
  }
  if (left <= 0) return { _tag: 'GiveUp', reason: 'wait_exhausted' }
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (progress.attempts - 1))
  const jittered = Math.round(ceiling / 2 + (ceiling / 2) * Math.min(Math.max(random, 0), 1))
  return { _tag: 'Retry', delayMs: Math.min(jittered, left) }
}

/**
 * Reads an HTTP `Retry-After` value — whole seconds or an HTTP date — as milliseconds from `nowMs`;
 * undefined when it is absent or unreadable. A date in the past is 0. `retry-after-ms` (sent by
 * some OpenAI-compatible servers) is read first when given.
 * @category constructors
 */
export const parseRetryAfter = (
  headers: { readonly retryAfter: string | null; readonly retryAfterMs?: string | null },
  nowMs: number,
): number | undefined => {
  const ms = headers.retryAfterMs?.trim()
  if (ms !== undefined && /^\d+(?:\.\d+)?$/.test(ms)) return Math.ceil(Number(ms))
  const value = headers.retryAfter?.trim()
  if (value === undefined || value === '') return undefined
  if (/^\d+$/.test(value)) return Number(value) * 1_000
  // An HTTP date names its day and month; Date.parse alone would read "-4" as a year.
  const at = /^[A-Za-z]{3}, /.test(value) ? Date.parse(value) : Number.NaN
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs)
}

const readWhole = (
  env: NodeJS.ProcessEnv,
  name: string,
  min: number,
  fallback: number,
): E.Either<ProviderChoiceError, number> => {
  const text = env[name]?.trim()
  if (text === undefined || text === '') return E.right(fallback)
  const value = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN
  // setTimeout's ceiling; a larger wait would fire at once.
  if (!Number.isInteger(value) || value < min || value > 2_147_483_647) {
    return E.left(providerChoiceError(`${name} must be a whole number of at least ${min}.`))
  }
  return E.right(value)
}

/**
 * Reads the retry policy from the environment, each variable falling back to
 * `DEFAULT_RETRY_POLICY`: `MAKA_PROVIDER_MAX_ATTEMPTS` (tries per step, ≥ 1; 1 turns retries off),
 * `MAKA_PROVIDER_RETRY_BASE_MS` (the first wait), `MAKA_PROVIDER_RETRY_MAX_WAIT_MS` (all waits of
 * one step together). A bad value is a `ProviderChoiceError` naming the variable.
 * @category constructors
 */
export const readRetryPolicy = (env: NodeJS.ProcessEnv = process.env): E.Either<ProviderChoiceError, RetryPolicy> => {
  const attempts = readWhole(env, 'MAKA_PROVIDER_MAX_ATTEMPTS', 1, DEFAULT_RETRY_POLICY.maxAttempts)
  if (E.isLeft(attempts)) return attempts
  const base = readWhole(env, 'MAKA_PROVIDER_RETRY_BASE_MS', 0, DEFAULT_RETRY_POLICY.baseDelayMs)
  if (E.isLeft(base)) return base
  const maxWait = readWhole(env, 'MAKA_PROVIDER_RETRY_MAX_WAIT_MS', 0, DEFAULT_RETRY_POLICY.maxWaitMs)
  if (E.isLeft(maxWait)) return maxWait
  return E.right({
    maxAttempts: attempts.right,
    baseDelayMs: base.right,
    maxDelayMs: Math.max(base.right, DEFAULT_RETRY_POLICY.maxDelayMs),
    maxWaitMs: maxWait.right,
  })
}
