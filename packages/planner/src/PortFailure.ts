/**
 * What a port call can end with besides its value. Stores fail with their `StoreError`, observers
 * with an `ObservationError`; an adapter that throws anyway is a bug on its side, caught once at the
 * planner's edge and kept as the words it threw, so that planning still parks instead of failing.
 */
import type { StoreError } from '@maka/stores'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * Why the host could not observe a fact: a `_tag` naming what failed and a human `message`. The
 * planner names no observer's error union (host-inspector depends on the planner, not the reverse);
 * host-inspector's `InspectError` and the stores' `StoreError` are both assignable to it.
 * @category errors
 */
export interface ObservationError {
  readonly _tag: string
  readonly message: string
}

/**
 * An adapter that threw or rejected instead of failing with a Left: a bug on its side, which still
 * parks planning (planning never fails) and is reported by what it threw.
 * @category errors
 */
export interface PortThrew {
  readonly thrown: string
}

/**
 * Everything a port call can end with besides its value: a typed failure, or an adapter that threw.
 * @category errors
 */
export type PortFailure = StoreError | ObservationError | PortThrew
