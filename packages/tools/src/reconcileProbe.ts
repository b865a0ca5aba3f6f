/**
 * Running a `reconcile` tool's read-only checks at the edge, where the executor and the host inspector
 * need them to be total: a basis is read before T1 and a probe after a crash, and neither may hang
 * the turn, throw at the caller, or smuggle in an answer the ledger cannot carry. Each runs under a
 * time limit (10 s by default); on time-out its signal is aborted and the answer is given at once,
 * without waiting for the tool. A basis that fails is a refusal value with a stable code and a
 * sentence that names no path or argument (the executor writes it as the call's refused response);
 * a probe that fails is simply `unreadable`.
 */
import * as E from 'fp-ts/lib/Either.js'
import { ReconcileBasis } from '@maka/events'
import { hasReconcileProbe } from './recoveryModeOf.js'
import type { ProbeContext, ProbeVerdict, Tool } from './Tool.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * How long a basis or a probe may take by default: 10 s.
 * @category models
 */
export const RECONCILE_LIMIT_MS = 10_000

/**
 * Why a reconcile basis could not be recorded, with the sentence the refused call's response holds.
 * Stable codes, never renamed or reused.
 * @category errors
 */
export const BasisRefusalSentences = {
  /** The basis threw or rejected, answered something other than a string, or the tool has no probe. */
  basis_failed: 'The state this call would change could not be read, so the call was not started.',
  /** The basis did not answer within its time limit (10 s by default); its signal was aborted. */
  basis_timeout: 'Reading the state this call would change took too long, so the call was not started.',
  /** The basis is longer than 256 bytes of UTF-8, more than a dispatch row may carry. */
  basis_too_large: 'The state this call would change could not be recorded in 256 bytes, so the call was not started.',
} as const

/**
 * A stable basis refusal code.
 * @category errors
 */
export type BasisRefusalCode = keyof typeof BasisRefusalSentences

/**
 * A basis that cannot be recorded: the call is refused before it is dispatched.
 * @category errors
 */
export interface BasisRefusal {
  readonly _tag: 'BasisRefusal'
  readonly code: BasisRefusalCode
  /** `BasisRefusalSentences[code]`: never a path, an argument or the tool's own error text. */
  readonly message: string
}

const refusal = (code: BasisRefusalCode): BasisRefusal => ({
  _tag: 'BasisRefusal',
  code,
  message: BasisRefusalSentences[code],
})

// -------------------------------------------------------------------------------------
// time limit
// -------------------------------------------------------------------------------------

type Bounded<A> =
  { readonly _tag: 'answered'; readonly value: A } | { readonly _tag: 'failed' } | { readonly _tag: 'timed_out' }

/**
 * Runs `start` with a signal of its own (aborted when `outer` aborts, or when the limit is over) and
 * resolves with the first of: its answer, its failure, the limit. A late answer is dropped, and a
 * late rejection is caught here so it never becomes an unhandled one.
 */
const withinLimit = <A>(
  start: (signal: AbortSignal) => Promise<A>,
  outer: AbortSignal | undefined,
  limitMs: number,
): Promise<Bounded<A>> =>
  new Promise((resolve) => {
    const controller = new AbortController()
    const forward = (): void => controller.abort(outer?.reason)
    if (outer?.aborted === true) forward()
    else outer?.addEventListener('abort', forward, { once: true })
    const finish = (result: Bounded<A>): void => {
      clearTimeout(timer)
      outer?.removeEventListener('abort', forward)
      resolve(result)
    }
    const timer = setTimeout(() => {
      controller.abort(new Error('time limit reached'))
      finish({ _tag: 'timed_out' })
    }, limitMs)
    let running: Promise<A>
    try {
      // Promise.resolve: a tool written in plain JavaScript may answer without a promise.
      running = Promise.resolve(start(controller.signal))
    } catch {
      finish({ _tag: 'failed' })
      return
    }
    running.then(
      (value) => finish({ _tag: 'answered', value }),
      () => finish({ _tag: 'failed' }),
    )
  })

// Only these three keys reach the tool: a probe reads the world, it has no recorder or ids to use.
const probeContextOf = (context: ProbeContext, signal: AbortSignal): ProbeContext => ({
  cwd: context.cwd,
  sessionId: context.sessionId,
  signal,
})

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Reads a `reconcile` tool's basis for a call, before its dispatch row is written: Right with the
 * basis, or Left with `basis_failed` (a throw, a rejection, a non-string answer, no probe),
 * `basis_timeout` (no answer within `limitMs`; the basis's signal is aborted and the answer is given
 * without waiting for it) or `basis_too_large` (over 256 UTF-8 bytes). Never rejects.
 * @category constructors
 */
export const computeReconcileBasis = async (
  tool: Tool,
  args: unknown,
  context: ProbeContext,
  limitMs: number = RECONCILE_LIMIT_MS,
): Promise<E.Either<BasisRefusal, ReconcileBasis>> => {
  const probe = tool.reconcile
  if (probe === undefined || !hasReconcileProbe(tool)) return E.left(refusal('basis_failed'))
  const answer = await withinLimit(
    (signal) => probe.basis(args, probeContextOf(context, signal)),
    context.signal,
    limitMs,
  )
  switch (answer._tag) {
    case 'timed_out':
      return E.left(refusal('basis_timeout'))
    case 'failed':
      return E.left(refusal('basis_failed'))
    case 'answered': {
      const basis: unknown = answer.value
      if (typeof basis !== 'string') return E.left(refusal('basis_failed'))
      return ReconcileBasis.is(basis) ? E.right(basis) : E.left(refusal('basis_too_large'))
    }
  }
}

const UNREADABLE: ProbeVerdict = { verdict: 'unreadable' }

// The output becomes a response's `result` in the ledger, so it is taken as JSON carries it; an output
// JSON cannot carry (undefined, a function, a bigint, a cycle) makes the answer malformed.
const asJson = (output: unknown): E.Either<void, unknown> => {
  try {
    const text = JSON.stringify(output) as string | undefined
    return text === undefined ? E.left(undefined) : E.right(JSON.parse(text))
  } catch {
    return E.left(undefined)
  }
}

/**
 * A probe's answer in its exact shape, or `unreadable` when it is malformed: not an object, an
 * unknown verdict, or `applied` without an output JSON can carry. Extra keys are dropped.
 */
const verdictOf = (answer: unknown): ProbeVerdict => {
  if (typeof answer !== 'object' || answer === null || !('verdict' in answer)) return UNREADABLE
  switch (answer.verdict) {
    case 'not_applied':
    case 'diverged':
    case 'unreadable':
      return { verdict: answer.verdict }
    case 'applied': {
      if (!('output' in answer)) return UNREADABLE
      const output = asJson(answer.output)
      return E.isRight(output) ? { verdict: 'applied', output: output.right } : UNREADABLE
    }
    default:
      return UNREADABLE
  }
}

/**
 * Runs a `reconcile` tool's probe of a dispatched call against its recorded basis. A throw, a
 * rejection, a malformed answer, a tool without a probe, or no answer within `limitMs` (the probe's
 * signal is aborted and the answer is given without waiting for it) is `unreadable`. Never rejects.
 * @category constructors
 */
export const runProbe = async (
  tool: Tool,
  args: unknown,
  context: ProbeContext,
  basis: string,
  limitMs: number = RECONCILE_LIMIT_MS,
): Promise<ProbeVerdict> => {
  const probe = tool.reconcile
  if (probe === undefined || !hasReconcileProbe(tool)) return UNREADABLE
  const answer = await withinLimit(
    (signal) => probe.probe(args, probeContextOf(context, signal), basis),
    context.signal,
    limitMs,
  )
  if (answer._tag !== 'answered') return UNREADABLE
  try {
    return verdictOf(answer.value)
  } catch {
    // A getter on the answer that throws is a malformed answer too.
    return UNREADABLE
  }
}
