/**
 * Decides, a byte at a time, what the bytes of one ledger row are so far: still a possible start of
 * a JSON object row, a complete JSON value, or something no continuation can turn into JSON.
 *
 * The reader needs this for the one row it cannot parse: the final line without a newline. Only a
 * proper prefix of a JSON object text is provably an append that was cut short (docs/contract.md §1);
 * anything else there may be committed data or damage, and must never be truncated. It is a small
 * state machine — constant memory apart from one bit per open container — so a 50 MB tail costs
 * one linear pass and no strings, unlike `JSON.parse` of the blob. It also lets the reader stop
 * holding a long row's bytes as soon as they can no longer be JSON.
 *
 * The grammar is RFC 8259 exactly as `JSON.parse` reads it (whitespace is space, tab, CR, LF), plus
 * UTF-8 validity exactly as `isUtf8` judges it, so a row this check rejects is one `JSON.parse`
 * (or the reader's UTF-8 check) would reject too. A multi-byte character cut at the very end is
 * still a prefix: a torn write may stop in the middle of one.
 */
import { isAscii } from 'node:buffer'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What the bytes fed so far are.
 * - `torn`: a proper prefix of a JSON object text (begins with `{`, not yet closed);
 * - `complete`: a JSON object text, closed (whitespace may follow);
 * - `not_object`: could still become JSON, but not a row (a leading space, an array, a string…);
 * - `not_json`: valid UTF-8 so far, but no continuation is JSON;
 * - `not_utf8`: not UTF-8 (and so not JSON);
 * - `empty`: nothing fed.
 * @category models
 */
export type JsonRowPrefixVerdict = 'empty' | 'torn' | 'complete' | 'not_object' | 'not_json' | 'not_utf8'

/**
 * An incremental check of one row's bytes.
 * @category models
 */
export interface JsonRowPrefix {
  /** Feeds `bytes[from, to)`, which continue the bytes fed so far. */
  feed(bytes: Uint8Array, from: number, to: number): void
  /** True once no continuation of the bytes fed so far can be a JSON text. */
  readonly rejected: () => boolean
  /** What the bytes fed so far are, taken as the whole (unterminated) final line. */
  verdict(): JsonRowPrefixVerdict
  /** Why the bytes fed so far, taken as a whole newline-terminated row, cannot be read. */
  rowReason(): string
  /** Forgets everything fed, for the next row. */
  reset(): void
}

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

const VALUE = 0 // a value is expected (top level, after `:` or after `,` in an array)
const ARRAY_FIRST = 1 // after `[`: a value or `]`
const OBJECT_FIRST = 2 // after `{`: a key or `}`
const OBJECT_KEY = 3 // after `,` in an object: a key
const COLON = 4
const AFTER_VALUE = 5 // inside a container: `,` or its closer
const STRING = 6
const ESCAPE = 7
const UNICODE = 8
const MINUS = 9
const ZERO = 10
const INT = 11
const DOT = 12
const FRAC = 13
const EXP_MARK = 14
const EXP_SIGN = 15
const EXP = 16
const LITERAL = 17
const DONE = 18 // the top-level value is complete; only whitespace may follow
const INVALID = 19

const OPEN_BRACE = 0x7b

const LITERALS: ReadonlyArray<Uint8Array> = [
  new Uint8Array([0x74, 0x72, 0x75, 0x65]), // true
  new Uint8Array([0x66, 0x61, 0x6c, 0x73, 0x65]), // false
  new Uint8Array([0x6e, 0x75, 0x6c, 0x6c]), // null
]

const isWhitespace = (b: number): boolean => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d
const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39
const isHex = (b: number): boolean => isDigit(b) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46)
// The characters after a backslash that JSON allows, besides `u`: " \ / b f n r t
const isEscape = (b: number): boolean =>
  b === 0x22 || b === 0x5c || b === 0x2f || b === 0x62 || b === 0x66 || b === 0x6e || b === 0x72 || b === 0x74

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Starts the check of one row.
 * @category constructors
 */
export const makeJsonRowPrefix = (): JsonRowPrefix => {
  let fed = 0
  let first = -1
  let state = VALUE
  let inKey = false
  let hexLeft = 0
  let literal: Uint8Array = LITERALS[0]!
  let literalAt = 0
  // One bit per open container, set for an object: 50 MB of `[` costs 6 MB here.
  let stack = new Uint8Array(16)
  let depth = 0
  // UTF-8: continuation bytes still expected, and the range the next one must fall in.
  let need = 0
  let lo = 0x80
  let hi = 0xbf
  let utf8Invalid = false

  const push = (object: boolean): void => {
    const at = depth >> 3
    if (at >= stack.length) {
      const larger = new Uint8Array(stack.length * 2)
      larger.set(stack)
      stack = larger
    }
    const bit = 1 << (depth & 7)
    stack[at] = object ? stack[at]! | bit : stack[at]! & ~bit
    depth += 1
  }
  const topIsObject = (): boolean => (stack[(depth - 1) >> 3]! & (1 << ((depth - 1) & 7))) !== 0
  const valueDone = (): number => (depth === 0 ? DONE : AFTER_VALUE)

  const startValue = (b: number): number => {
    switch (b) {
      case 0x7b: // {
        push(true)
        return OBJECT_FIRST
      case 0x5b: // [
        push(false)
        return ARRAY_FIRST
      case 0x22: // "
        inKey = false
        return STRING
      case 0x2d: // -
        return MINUS
      case 0x30:
        return ZERO
      case 0x74:
      case 0x66:
      case 0x6e:
        literal = LITERALS[b === 0x74 ? 0 : b === 0x66 ? 1 : 2]!
        literalAt = 1
        return LITERAL
      default:
        if (b >= 0x31 && b <= 0x39) return INT
        return isWhitespace(b) ? state : INVALID
    }
  }

  // After a number ends, the byte that ended it is read in the state the number left behind.
  const endNumber = (b: number): number => {
    state = valueDone()
    return step(b)
  }

  const startKey = (b: number): number => {
    if (b === 0x22) {
      inKey = true
      return STRING
    }
    return isWhitespace(b) ? state : INVALID
  }

  const afterValue = (b: number): number => {
    if (isWhitespace(b)) return AFTER_VALUE
    const object = topIsObject()
    if (b === 0x2c) return object ? OBJECT_KEY : VALUE // ,
    if ((b === 0x7d && object) || (b === 0x5d && !object)) {
      depth -= 1
      return valueDone()
    }
    return INVALID
  }

  const step = (b: number): number => {
    switch (state) {
      case VALUE:
        return startValue(b)
      case ARRAY_FIRST:
        if (b === 0x5d) {
          depth -= 1
          return valueDone()
        }
        return startValue(b)
      case OBJECT_FIRST:
        if (b === 0x7d) {
          depth -= 1
          return valueDone()
        }
        return startKey(b)
      case OBJECT_KEY:
        return startKey(b)
      case COLON:
        if (b === 0x3a) return VALUE
        return isWhitespace(b) ? COLON : INVALID
      case AFTER_VALUE:
        return afterValue(b)
      case STRING:
        if (b === 0x22) return inKey ? COLON : valueDone()
        if (b === 0x5c) return ESCAPE
        // Bytes ≥ 0x80 are a character's UTF-8 bytes (validated on their own); control characters are not allowed raw.
        return b < 0x20 ? INVALID : STRING
      case ESCAPE:
        if (b === 0x75) {
          hexLeft = 4
          return UNICODE
        }
        return isEscape(b) ? STRING : INVALID
      case UNICODE:
        if (!isHex(b)) return INVALID
        hexLeft -= 1
        return hexLeft === 0 ? STRING : UNICODE
      case MINUS:
        if (b === 0x30) return ZERO
        return b >= 0x31 && b <= 0x39 ? INT : INVALID
      case ZERO:
        if (b === 0x2e) return DOT
        if (b === 0x65 || b === 0x45) return EXP_MARK
        return endNumber(b)
      case INT:
        if (isDigit(b)) return INT
        if (b === 0x2e) return DOT
        if (b === 0x65 || b === 0x45) return EXP_MARK
        return endNumber(b)
      case DOT:
        return isDigit(b) ? FRAC : INVALID
      case FRAC:
        if (isDigit(b)) return FRAC
        if (b === 0x65 || b === 0x45) return EXP_MARK
        return endNumber(b)
      case EXP_MARK:
        if (b === 0x2b || b === 0x2d) return EXP_SIGN
        return isDigit(b) ? EXP : INVALID
      case EXP_SIGN:
        return isDigit(b) ? EXP : INVALID
      case EXP:
        return isDigit(b) ? EXP : endNumber(b)
      case LITERAL:
        if (b !== literal[literalAt]) return INVALID
        literalAt += 1
        return literalAt === literal.length ? valueDone() : LITERAL
      case DONE:
        return isWhitespace(b) ? DONE : INVALID
      default:
        return INVALID
    }
  }

  const utf8 = (b: number): void => {
    if (need === 0) {
      if (b < 0x80) return
      if (b >= 0xc2 && b <= 0xdf) need = 1
      else if (b >= 0xe0 && b <= 0xef) {
        need = 2
        // No overlong three-byte forms (E0 80–9F) and no surrogates (ED A0–BF).
        if (b === 0xe0) lo = 0xa0
        else if (b === 0xed) hi = 0x9f
      } else if (b >= 0xf0 && b <= 0xf4) {
        need = 3
        // No overlong four-byte forms (F0 80–8F) and nothing above U+10FFFF (F4 90–BF).
        if (b === 0xf0) lo = 0x90
        else if (b === 0xf4) hi = 0x8f
      } else utf8Invalid = true
      return
    }
    if (b < lo || b > hi) {
      utf8Invalid = true
      return
    }
    need -= 1
    lo = 0x80
    hi = 0xbf
  }

  const reset = (): void => {
    fed = 0
    first = -1
    state = VALUE
    inKey = false
    depth = 0
    need = 0
    lo = 0x80
    hi = 0xbf
    utf8Invalid = false
  }

  return {
    feed: (bytes, from, to) => {
      if (from >= to || utf8Invalid) return
      if (first === -1) first = bytes[from]!
      fed += to - from
      // Once no longer JSON, only UTF-8 validity is left to judge, and ASCII is always valid.
      if (state === INVALID && need === 0 && isAscii(bytes.subarray(from, to))) return
      for (let at = from; at < to && !utf8Invalid; at++) {
        const b = bytes[at]!
        // The bulk of a long row is plain ASCII inside a string: nothing to track there.
        if (state === STRING && need === 0 && b >= 0x20 && b < 0x80 && b !== 0x22 && b !== 0x5c) continue
        utf8(b)
        // Outside strings only ASCII is JSON; inside, a non-ASCII byte is part of a character.
        if (state !== INVALID) state = b >= 0x80 ? (state === STRING ? STRING : INVALID) : step(b)
      }
    },
    rejected: () => utf8Invalid || state === INVALID,
    verdict: () => {
      if (fed === 0) return 'empty'
      if (utf8Invalid) return 'not_utf8'
      if (state === INVALID) return 'not_json'
      if (first !== OPEN_BRACE) return 'not_object'
      return state === DONE ? 'complete' : 'torn'
    },
    rowReason: () => (utf8Invalid || need > 0 ? 'row is not valid UTF-8' : 'row is not valid JSON'),
    reset,
  }
}
