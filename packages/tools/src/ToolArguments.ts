/**
 * Hand-written argument checks for the built-in tools. Arguments come from a model, so they are
 * unknown JSON; each check either yields a typed value or one sentence telling the model exactly
 * which argument to fix. Unknown keys are refused too, matching `additionalProperties: false` in the
 * schemas, so a misspelt option is reported instead of silently ignored.
 */
import * as E from 'fp-ts/lib/Either.js'
import { invalidArguments, type ToolFailure } from './ToolFailure.js'

/**
 * The arguments object of one call, with the tool name for messages.
 * @category models
 */
export interface ToolArguments {
  readonly tool: string
  readonly values: Readonly<Record<string, unknown>>
}

/**
 * Accepts a plain object whose keys are all in `allowed`.
 * @category constructors
 */
export const argumentsObject = (
  tool: string,
  args: unknown,
  allowed: ReadonlyArray<string>,
): E.Either<ToolFailure, ToolArguments> => {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return E.left(invalidArguments(tool, `${tool} needs its arguments as a JSON object.`))
  }
  const unknownKey = Object.keys(args).find((key) => !allowed.includes(key))
  if (unknownKey !== undefined) {
    return E.left(
      invalidArguments(
        tool,
        `${tool} does not take "${unknownKey}"; it takes ${allowed.map((k) => `"${k}"`).join(', ')}.`,
      ),
    )
  }
  return E.right({ tool, values: args as Readonly<Record<string, unknown>> })
}

/**
 * A required string; `nonEmpty` also refuses `''`. NUL bytes are refused because no path or
 * command may hold one.
 * @category constructors
 */
export const requiredString = (
  args: ToolArguments,
  key: string,
  options: { readonly nonEmpty: boolean },
): E.Either<ToolFailure, string> => {
  const value = args.values[key]
  if (value === undefined) return E.left(invalidArguments(args.tool, `${args.tool} needs "${key}".`))
  if (typeof value !== 'string' || (options.nonEmpty && value.length === 0)) {
    const what = options.nonEmpty ? 'a non-empty string' : 'a string'
    return E.left(invalidArguments(args.tool, `${args.tool} needs "${key}" to be ${what}.`))
  }
  if (value.includes('\0')) {
    return E.left(invalidArguments(args.tool, `${args.tool} needs "${key}" without NUL characters.`))
  }
  return E.right(value)
}

/**
 * An optional string; `undefined` and `null` both mean "not given".
 * @category constructors
 */
export const optionalString = (args: ToolArguments, key: string): E.Either<ToolFailure, string | undefined> =>
  args.values[key] === undefined || args.values[key] === null
    ? E.right(undefined)
    : requiredString(args, key, { nonEmpty: true })

/**
 * An optional boolean.
 * @category constructors
 */
export const optionalBoolean = (args: ToolArguments, key: string): E.Either<ToolFailure, boolean | undefined> => {
  const value = args.values[key]
  if (value === undefined || value === null) return E.right(undefined)
  return typeof value === 'boolean'
    ? E.right(value)
    : E.left(invalidArguments(args.tool, `${args.tool} needs "${key}" to be true or false.`))
}

/**
 * An optional whole number within `[min, max]`.
 * @category constructors
 */
export const optionalInteger = (
  args: ToolArguments,
  key: string,
  min: number,
  max: number,
): E.Either<ToolFailure, number | undefined> => {
  const value = args.values[key]
  if (value === undefined || value === null) return E.right(undefined)
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max
    ? E.right(value)
    : E.left(invalidArguments(args.tool, `${args.tool} needs "${key}" to be a whole number from ${min} to ${max}.`))
}
