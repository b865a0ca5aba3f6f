/**
 * The vocabulary of the tool journal (Phase 2): the protocol marker a run's first row carries, the
 * dispatch row written durably before a tool's implementation starts (T1), the outcome a
 * `function_response` of a protocol run carries (T2), a continuation's settlement plan, and the two
 * digests that tie them to what was asked and to the prefix a continuation stands on. Every shape is
 * exact and every enum closed, so a value this build does not know fails closed.
 *
 * The digests are computed here, in the pure core, because the projection must recompute a call's
 * `argsDigest` to check a dispatch against it: JCS (RFC 8785) canonical JSON, then SHA-256, both
 * from maintained pure-JavaScript libraries.
 */
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import canonicalize from 'canonicalize'
import * as O from 'fp-ts/lib/Option.js'
import * as t from 'io-ts'
import { NonEmptyString } from './ids.js'
import { strictStruct } from './strictStruct.js'

// -------------------------------------------------------------------------------------
// enums
// -------------------------------------------------------------------------------------

/**
 * The one protocol version: T1 is written after preflight.
 * @category constants
 */
export const TOOL_BOUNDARY_PROTOCOL = 't1_after_preflight_v1'

/**
 * How a tool's call may be recovered after a crash, as its catalog declares it. `never_auto_retry`
 * is the default of a tool that declares nothing.
 * @category codecs
 */
export const RecoveryMode = t.keyof({
  replay_safe: null,
  idempotent: null,
  reconcile: null,
  reattach: null,
  never_auto_retry: null,
})
/** @category models */
export type RecoveryMode = t.TypeOf<typeof RecoveryMode>

/**
 * Where the one response that closes an operation came from.
 * @category codecs
 */
export const SettlementOrigin = t.keyof({
  normal_t2: null,
  pre_t1_synthetic: null,
  reissue_t2: null,
  reconcile_applied: null,
  reattached: null,
  operator_adjudication: null,
})
/** @category models */
export type SettlementOrigin = t.TypeOf<typeof SettlementOrigin>

/**
 * What a continuation does for an operation its source left open.
 * @category codecs
 */
export const SettlementAction = t.keyof({
  reissue: null,
  settle_applied: null,
  settle_reattached: null,
  adjudicate: null,
})
/** @category models */
export type SettlementAction = t.TypeOf<typeof SettlementAction>

/**
 * What a person recorded about an operation.
 * @category codecs
 */
export const AdjudicationVerdict = t.keyof({ applied: null, not_applied: null, failed: null })
/** @category models */
export type AdjudicationVerdict = t.TypeOf<typeof AdjudicationVerdict>

/**
 * Where the person recorded it.
 * @category codecs
 */
export const AdjudicationActor = t.keyof({ cli: null, tui: null, desktop: null, browser: null })
/** @category models */
export type AdjudicationActor = t.TypeOf<typeof AdjudicationActor>

// -------------------------------------------------------------------------------------
// scalars
// -------------------------------------------------------------------------------------

/** @category models */
export interface AttemptBrand {
  readonly Attempt: unique symbol
}

/**
 * An attempt number: an integer ≥ 1.
 * @category codecs
 */
export const Attempt = t.brand(t.Int, (n): n is t.Branded<t.Int, AttemptBrand> => n >= 1, 'Attempt')
/** @category models */
export type Attempt = t.TypeOf<typeof Attempt>

/** @category models */
export interface Sha256DigestBrand {
  readonly Sha256Digest: unique symbol
}

/**
 * `sha256:` and 64 lowercase hex digits: an `argsDigest` or a prefix digest.
 * @category codecs
 */
export const Sha256Digest = t.brand(
  t.string,
  (s): s is t.Branded<string, Sha256DigestBrand> => /^sha256:[0-9a-f]{64}$/.test(s),
  'Sha256Digest',
)
/** @category models */
export type Sha256Digest = t.TypeOf<typeof Sha256Digest>

/** The most bytes (UTF-8) a `reconcileBasis` may hold. */
const MAX_BASIS_BYTES = 256

/** @category models */
export interface ReconcileBasisBrand {
  readonly ReconcileBasis: unique symbol
}

/**
 * The pre-image a `reconcile` tool records before its effect: at most 256 bytes of UTF-8.
 * @category codecs
 */
export const ReconcileBasis = t.brand(
  t.string,
  (s): s is t.Branded<string, ReconcileBasisBrand> => utf8ToBytes(s).length <= MAX_BASIS_BYTES,
  'ReconcileBasis',
)
/** @category models */
export type ReconcileBasis = t.TypeOf<typeof ReconcileBasis>

// -------------------------------------------------------------------------------------
// rows
// -------------------------------------------------------------------------------------

/**
 * `actions.runtimeProtocol`: the marker on row 1 of a protocol run.
 * @category codecs
 */
export const RuntimeProtocol = strictStruct('RuntimeProtocol', { toolBoundary: t.literal(TOOL_BOUNDARY_PROTOCOL) }, {})
/** @category models */
export type RuntimeProtocol = t.TypeOf<typeof RuntimeProtocol>

const ToolDispatchFields = strictStruct(
  'ToolDispatch',
  {
    protocol: t.literal(TOOL_BOUNDARY_PROTOCOL),
    operationId: NonEmptyString,
    toolCallId: NonEmptyString,
    toolName: NonEmptyString,
    argsDigest: Sha256Digest,
    recoveryMode: RecoveryMode,
    attempt: Attempt,
  },
  { reconcileBasis: ReconcileBasis, priorVerdict: t.literal('not_applied') },
)

/** @category models */
export interface ToolDispatchBrand {
  readonly ToolDispatch: unique symbol
}

/**
 * `actions.toolDispatch` (T1): preflight passed, the implementation is about to start. A
 * `reconcileBasis` is present exactly when the mode is `reconcile`.
 * @category codecs
 */
export const ToolDispatch = t.brand(
  ToolDispatchFields,
  (d): d is t.Branded<t.TypeOf<typeof ToolDispatchFields>, ToolDispatchBrand> =>
    (d.reconcileBasis !== undefined) === (d.recoveryMode === 'reconcile'),
  'ToolDispatch',
)
/** @category models */
export type ToolDispatch = t.TypeOf<typeof ToolDispatch>

const ToolOutcomeFields = strictStruct(
  'ToolOutcome',
  { protocol: t.literal(TOOL_BOUNDARY_PROTOCOL), operationId: NonEmptyString, settlementOrigin: SettlementOrigin },
  {
    attempt: Attempt,
    adjudication: strictStruct('Adjudication', { verdict: AdjudicationVerdict, actor: AdjudicationActor }, {}),
  },
)

/** @category models */
export interface ToolOutcomeBrand {
  readonly ToolOutcome: unique symbol
}

// Only a response the implementation itself produced belongs to an attempt.
const hasAttempt = (origin: SettlementOrigin): boolean => origin === 'normal_t2' || origin === 'reissue_t2'

/**
 * `actions.toolOutcome` (T2), on every `function_response` of a protocol run. `attempt` is present
 * exactly for `normal_t2` and `reissue_t2`; `adjudication` exactly for `operator_adjudication`.
 * @category codecs
 */
export const ToolOutcome = t.brand(
  ToolOutcomeFields,
  (o): o is t.Branded<t.TypeOf<typeof ToolOutcomeFields>, ToolOutcomeBrand> =>
    (o.attempt !== undefined) === hasAttempt(o.settlementOrigin) &&
    (o.adjudication !== undefined) === (o.settlementOrigin === 'operator_adjudication'),
  'ToolOutcome',
)
/** @category models */
export type ToolOutcome = t.TypeOf<typeof ToolOutcome>

/**
 * One entry of a continuation's settlement plan.
 * @category codecs
 */
export const SettlementEntry = strictStruct(
  'SettlementEntry',
  { operationId: NonEmptyString, toolCallId: NonEmptyString, action: SettlementAction },
  {},
)
/** @category models */
export type SettlementEntry = t.TypeOf<typeof SettlementEntry>

/** The most operations one continuation settles; more parks `operator_decision_required`. */
export const MAX_SETTLEMENTS = 64

/** @category models */
export interface SettlementPlanBrand {
  readonly SettlementPlan: unique symbol
}

/**
 * `actions.settlementPlan`: 1 to 64 entries, on a continuation-start row only.
 * @category codecs
 */
export const SettlementPlan = t.brand(
  t.readonlyArray(SettlementEntry),
  (entries): entries is t.Branded<ReadonlyArray<SettlementEntry>, SettlementPlanBrand> =>
    entries.length >= 1 && entries.length <= MAX_SETTLEMENTS,
  'SettlementPlan',
)
/** @category models */
export type SettlementPlan = t.TypeOf<typeof SettlementPlan>

// -------------------------------------------------------------------------------------
// ids and digests
// -------------------------------------------------------------------------------------

/**
 * The id of the operation whose call is row `row` (1-based) of run `runId`'s ledger: positional, so
 * it is unique across a data dir, checkable against the call's place, and locates the args again.
 * @category constructors
 */
export const operationIdOf = (runId: string, row: number): string => `${runId}-o${row}`

/**
 * `sha256:` + the lowercase hex SHA-256 of the JCS (RFC 8785) canonical JSON of a call's `args`
 * (`null` when there are none). Equal args give equal digests whatever their key order.
 * @category constructors
 */
export const argsDigest = (args: unknown): Sha256Digest =>
  sha256Digest(canonicalJson(args === undefined ? null : args), nobleSha256Hex)

/**
 * {@link argsDigest} over the SHA-256 a shell passes in (the lowercase hex of the UTF-8 bytes of
 * `text`), so a running agent hashes each call natively (`node:crypto`) while pure code keeps the
 * hash written in JS. Both give the same digest for the same args; a hash that gives anything but
 * 64 lowercase hex digits is a bug and throws.
 * @category constructors
 */
export const argsDigestWith =
  (sha256Hex: (text: string) => string) =>
  (args: unknown): Sha256Digest =>
    sha256Digest(canonicalJson(args === undefined ? null : args), sha256Hex)

/**
 * A prefix digest from the bare hex of a ledger scan (`LedgerScan.digest`); none when the hex is not
 * 64 lowercase hex digits.
 * @category constructors
 */
export const prefixDigestOf = (hex: string): O.Option<Sha256Digest> =>
  O.fromEither(Sha256Digest.decode(`sha256:${hex}`))

// JCS refuses what JSON cannot hold (a function, a symbol, a bigint, a cycle); args come from a
// parsed ledger row or a model's parsed JSON, so that is a bug, not an outcome.
const canonicalJson = (value: unknown): string => {
  const text = canonicalize(value)
  if (text === undefined) throw new TypeError('argsDigest: the args are not JSON')
  return text
}

const nobleSha256Hex = (text: string): string => bytesToHex(sha256(utf8ToBytes(text)))

const sha256Digest = (text: string, sha256Hex: (text: string) => string): Sha256Digest => {
  const digest = `sha256:${sha256Hex(text)}`
  if (!Sha256Digest.is(digest)) throw new TypeError('sha256 gave a malformed digest')
  return digest
}
