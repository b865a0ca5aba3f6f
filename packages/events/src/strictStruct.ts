/**
 * A record codec that rejects unknown keys. io-ts' `exact` strips extra keys silently, which would
 * turn a row we do not understand into a fact we trust; the ledger contract says such rows are
 * invalid, so this combinator fails closed instead.
 */
import * as t from 'io-ts'

/**
 * The decoded type of a strict struct: required props plus optional props.
 * @category models
 */
export type StrictStructType<R extends t.Props, O extends t.Props> = t.TypeOf<t.TypeC<R>> & t.TypeOf<t.PartialC<O>>

/**
 * Builds a codec for an object with exactly the given required and optional keys.
 * @category constructors
 */
export const strictStruct = <R extends t.Props, O extends t.Props>(
  name: string,
  required: R,
  optional: O,
): t.Type<StrictStructType<R, O>, StrictStructType<R, O>, unknown> => {
  const known = new Set([...Object.keys(required), ...Object.keys(optional)])
  const requiredCodec = t.type(required)
  const optionalCodec = t.partial(optional)
  const hasOnlyKnownKeys = (u: object): boolean => Object.keys(u).every((k) => known.has(k))
  return new t.Type<StrictStructType<R, O>, StrictStructType<R, O>, unknown>(
    name,
    (u): u is StrictStructType<R, O> =>
      typeof u === 'object' && u !== null && hasOnlyKnownKeys(u) && requiredCodec.is(u) && optionalCodec.is(u),
    (u, c) => {
      if (typeof u !== 'object' || u === null || Array.isArray(u)) return t.failure(u, c, `${name} must be an object`)
      for (const key of Object.keys(u)) {
        if (!known.has(key)) {
          return t.failure(
            (u as Record<string, unknown>)[key],
            t.appendContext(c, key, t.never, (u as Record<string, unknown>)[key]),
            `unknown key "${key}" in ${name}`,
          )
        }
      }
      const requiredResult = requiredCodec.validate(u, c)
      if (requiredResult._tag === 'Left') return requiredResult
      const optionalResult = optionalCodec.validate(u, c)
      if (optionalResult._tag === 'Left') return optionalResult
      // Every leaf codec here is non-transforming, so the validated input is the value itself;
      // skipping the rebuild keeps decoding a million-row ledger cheap.
      return t.success(u as StrictStructType<R, O>)
    },
    t.identity,
  )
}

/**
 * A union discriminated by the literal `kind`: the member is chosen by `kind` alone, so an error
 * names the real problem (not the first member that failed) and decoding costs one lookup.
 * @category constructors
 */
export const discriminatedByKind = <M extends Record<string, t.Mixed>>(
  name: string,
  members: M,
): t.Type<t.TypeOf<M[keyof M]>, t.OutputOf<M[keyof M]>, unknown> => {
  const kinds = Object.keys(members)
  const memberOf = (u: unknown): t.Mixed | undefined => {
    if (typeof u !== 'object' || u === null) return undefined
    const kind = (u as { kind?: unknown }).kind
    return typeof kind === 'string' && Object.hasOwn(members, kind) ? members[kind] : undefined
  }
  return new t.Type<t.TypeOf<M[keyof M]>, t.OutputOf<M[keyof M]>, unknown>(
    name,
    (u): u is t.TypeOf<M[keyof M]> => memberOf(u)?.is(u) === true,
    (u, c) => {
      const member = memberOf(u)
      if (member === undefined) {
        return t.failure(u, c, `${name} needs a kind of ${kinds.join(', ')}`)
      }
      return member.validate(u, c) as t.Validation<t.TypeOf<M[keyof M]>>
    },
    (a) => (memberOf(a)?.encode(a) ?? a) as t.OutputOf<M[keyof M]>,
  )
}

/**
 * Turns io-ts errors into one short human sentence naming the failing path.
 * @category errors
 */
export const describeDecodeErrors = (errors: t.Errors): string => {
  const first = errors[0]
  if (first === undefined) return 'invalid value'
  if (first.message !== undefined) {
    const path = pathOf(first.context)
    return path === '' ? first.message : `${path}: ${first.message}`
  }
  const path = pathOf(first.context)
  const expected = first.context[first.context.length - 1]?.type.name ?? 'a valid value'
  return `${path === '' ? 'value' : path}: expected ${expected}, got ${preview(first.value)}`
}

const pathOf = (context: t.Context): string =>
  context
    .map((entry) => entry.key)
    .filter((key) => key !== '' && !/^\d+$/.test(key))
    .join('.')

// Only the kind of the value is named: a row's values may hold prompts or tool data, which must
// never reach an error message or a log.
const preview = (value: unknown): string => {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}
