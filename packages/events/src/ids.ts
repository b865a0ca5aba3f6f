/**
 * Branded identifiers. Every id that names a file or folder (session, run, shell run) is checked
 * against one pattern before any path is built from it, so `..`, `/` and empty ids never reach the
 * filesystem.
 */
import * as t from 'io-ts'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The pattern every path-safe id matches.
 * @category models
 */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/

/**
 * True when `s` may be used as a path segment id.
 * @category guards
 */
export const isSafeId = (s: unknown): s is string => typeof s === 'string' && ID_PATTERN.test(s)

/** The brand of {@link NonEmptyString}. @category models */
export interface NonEmptyStringBrand {
  readonly NonEmptyString: unique symbol
}
/**
 * A string with at least one character (invocation, turn, event and tool call ids).
 * @category codecs
 */
export const NonEmptyString = t.brand(
  t.string,
  (s): s is t.Branded<string, NonEmptyStringBrand> => s.length > 0,
  'NonEmptyString',
)
/**
 * A string with at least one character.
 * @category models
 */
export type NonEmptyString = t.TypeOf<typeof NonEmptyString>

/** The brand of {@link SessionId}. @category models */
export interface SessionIdBrand {
  readonly SessionId: unique symbol
}
/**
 * A session id, safe to use as a folder name. It refines {@link NonEmptyString}, so a checked id is
 * also a row's `sessionId` without another check.
 * @category codecs
 */
export const SessionId = t.brand(
  NonEmptyString,
  (s): s is t.Branded<NonEmptyString, SessionIdBrand> => isSafeId(s),
  'SessionId',
)
/**
 * A session id, safe to use as a folder name.
 * @category models
 */
export type SessionId = t.TypeOf<typeof SessionId>

/** The brand of {@link RunId}. @category models */
export interface RunIdBrand {
  readonly RunId: unique symbol
}
/**
 * A run id, safe to use as a folder name; a {@link NonEmptyString} too.
 * @category codecs
 */
export const RunId = t.brand(NonEmptyString, (s): s is t.Branded<NonEmptyString, RunIdBrand> => isSafeId(s), 'RunId')
/**
 * A run id, safe to use as a folder name.
 * @category models
 */
export type RunId = t.TypeOf<typeof RunId>

/** The brand of {@link ShellRunId}. @category models */
export interface ShellRunIdBrand {
  readonly ShellRunId: unique symbol
}
/**
 * A background shell operation id, safe to use as a file name.
 * @category codecs
 */
export const ShellRunId = t.brand(
  NonEmptyString,
  (s): s is t.Branded<NonEmptyString, ShellRunIdBrand> => isSafeId(s),
  'ShellRunId',
)
/**
 * A background shell operation id, safe to use as a file name.
 * @category models
 */
export type ShellRunId = t.TypeOf<typeof ShellRunId>

/** The brand of {@link NonNegativeInt}. @category models */
export interface NonNegativeIntBrand {
  readonly NonNegativeInt: unique symbol
}
/**
 * An integer ≥ 0 (high-water marks, counts).
 * @category codecs
 */
export const NonNegativeInt = t.brand(
  t.number,
  (n): n is t.Branded<number, NonNegativeIntBrand> => Number.isSafeInteger(n) && n >= 0,
  'NonNegativeInt',
)
/**
 * An integer ≥ 0.
 * @category models
 */
export type NonNegativeInt = t.TypeOf<typeof NonNegativeInt>

/** The brand of {@link FiniteNumber}. @category models */
export interface FiniteNumberBrand {
  readonly FiniteNumber: unique symbol
}
/**
 * A finite number (timestamps in Unix ms).
 * @category codecs
 */
export const FiniteNumber = t.brand(
  t.number,
  (n): n is t.Branded<number, FiniteNumberBrand> => Number.isFinite(n),
  'FiniteNumber',
)
/**
 * A finite number.
 * @category models
 */
export type FiniteNumber = t.TypeOf<typeof FiniteNumber>

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/
/** The brand of {@link IsoTimestamp}. @category models */
export interface IsoTimestampBrand {
  readonly IsoTimestamp: unique symbol
}
/**
 * An ISO-8601 date-time string with a zone (`2026-01-02T03:04:05.678Z`).
 * @category codecs
 */
export const IsoTimestamp = t.brand(
  t.string,
  (s): s is t.Branded<string, IsoTimestampBrand> => ISO_8601.test(s) && !Number.isNaN(Date.parse(s)),
  'IsoTimestamp',
)
/**
 * An ISO-8601 date-time string with a zone.
 * @category models
 */
export type IsoTimestamp = t.TypeOf<typeof IsoTimestamp>

/** The brand of {@link AbsolutePath}. @category models */
export interface AbsolutePathBrand {
  readonly AbsolutePath: unique symbol
}
/**
 * An absolute filesystem path (POSIX, or a Windows drive path on a best-effort basis).
 * @category codecs
 */
export const AbsolutePath = t.brand(
  t.string,
  (s): s is t.Branded<string, AbsolutePathBrand> => s.startsWith('/') || /^[A-Za-z]:[\\/]/.test(s),
  'AbsolutePath',
)
/**
 * An absolute filesystem path.
 * @category models
 */
export type AbsolutePath = t.TypeOf<typeof AbsolutePath>

// -------------------------------------------------------------------------------------
// unsafe
// -------------------------------------------------------------------------------------

/**
 * Brands a string as a SessionId without checking it: test fixtures only.
 * @category unsafe
 */
export const makeSessionIdUnsafe = (s: string): SessionId => s as SessionId
/**
 * Brands a string as a RunId without checking it: test fixtures only.
 * @category unsafe
 */
export const makeRunIdUnsafe = (s: string): RunId => s as RunId
/**
 * Brands a string as a ShellRunId without checking it: test fixtures only.
 * @category unsafe
 */
export const makeShellRunIdUnsafe = (s: string): ShellRunId => s as ShellRunId
/**
 * Brands a string as a NonEmptyString without checking it.
 * @category unsafe
 */
export const makeNonEmptyStringUnsafe = (s: string): NonEmptyString => s as NonEmptyString
/**
 * Brands a number as a FiniteNumber without checking it (use with `Date#getTime` of a valid date).
 * @category unsafe
 */
export const makeFiniteNumberUnsafe = (n: number): FiniteNumber => n as FiniteNumber
/**
 * Brands a number as a NonNegativeInt without checking it.
 * @category unsafe
 */
export const makeNonNegativeIntUnsafe = (n: number): NonNegativeInt => n as NonNegativeInt
/**
 * Brands a string as an IsoTimestamp without checking it (use with `Date#toISOString`).
 * @category unsafe
 */
export const makeIsoTimestampUnsafe = (s: string): IsoTimestamp => s as IsoTimestamp
/**
 * Brands a string as an AbsolutePath without checking it.
 * @category unsafe
 */
export const makeAbsolutePathUnsafe = (s: string): AbsolutePath => s as AbsolutePath
