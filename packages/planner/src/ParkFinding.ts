/**
 * A park finding: one stable reason code, the sentence a person reads, and plain-data detail. Every
 * early exit and every gate fails with a non-empty list of findings, so the same type flows through
 * the short-circuiting stages (Either's monad) and the collecting gates (the validation applicative).
 */
import { type ParkReason, describeParkReason } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import * as RNEA from 'fp-ts/lib/ReadonlyNonEmptyArray.js'
import type { PortFailure } from './PortFailure.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Why the planner refuses: a stable code, its human sentence and what exactly it saw.
 * @category models
 */
export interface ParkFinding {
  readonly code: ParkReason
  readonly message: string
  readonly detail: Readonly<Record<string, unknown>>
}

/**
 * One or more findings; a failed stage or gate never fails with none.
 * @category models
 */
export type ParkFindings = RNEA.ReadonlyNonEmptyArray<ParkFinding>

/**
 * A gate: a small validator that either passes a value on or fails with its findings.
 * @category models
 */
export type Gate<I, A> = (input: I) => E.Either<ParkFindings, A>

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds a finding; the message always comes from the events code table.
 * @category constructors
 */
export const makeParkFinding = (code: ParkReason, detail: Readonly<Record<string, unknown>> = {}): ParkFinding => ({
  code,
  message: describeParkReason(code),
  detail,
})

/**
 * A failed stage or gate with exactly one finding.
 * @category constructors
 */
export const park = <A = never>(
  code: ParkReason,
  detail: Readonly<Record<string, unknown>> = {},
): E.Either<ParkFindings, A> => E.left(RNEA.of(makeParkFinding(code, detail)))

/**
 * Passes when `ok`, otherwise fails with one finding whose detail is computed only on failure.
 * @category constructors
 */
export const parkUnless = (
  ok: boolean,
  code: ParkReason,
  detail: () => Readonly<Record<string, unknown>> = () => ({}),
): E.Either<ParkFindings, void> => (ok ? E.right(undefined) : park(code, detail()))

// -------------------------------------------------------------------------------------
// instances
// -------------------------------------------------------------------------------------

/**
 * The validation applicative over findings: independent gates combined with it report every failure.
 * @category gates
 */
export const FindingsValidation = E.getApplicativeValidation(RNEA.getSemigroup<ParkFinding>())

// -------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------

/**
 * Names what a port failed with, as one plain string, so plans stay JSON data: a typed failure as
 * `Tag: message`, an adapter that threw by what it threw.
 * @category errors
 */
export const describeCause = (failure: PortFailure): string =>
  'thrown' in failure ? failure.thrown : `${failure._tag}: ${failure.message}`

/**
 * The words of a value an adapter threw or rejected with: its message, the string itself, or its
 * JSON. Only a catch reaches this — a typed failure never does. Never throws.
 * @category errors
 */
export const describeThrown = (thrown: unknown): string => {
  try {
    if (thrown instanceof Error) return thrown.message
    if (typeof thrown === 'string') return thrown
    if (typeof thrown === 'object' && thrown !== null) {
      const tagged = thrown as { readonly _tag?: unknown; readonly message?: unknown }
      if (typeof tagged.message === 'string') {
        return typeof tagged._tag === 'string' ? `${tagged._tag}: ${tagged.message}` : tagged.message
      }
      return JSON.stringify(thrown) ?? 'unknown failure'
    }
    return String(thrown)
  } catch {
    return 'unknown failure'
  }
}
