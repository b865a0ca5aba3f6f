/**
 * The scripted model's script: a JSON array of steps (hosts.md, "Providers and tools"). A script is
 * user input read from a file, so it is decoded strictly — an unknown key or a misspelt step kind is
 * rejected with a sentence instead of being silently skipped, which would make a demo lie.
 */
import { describeDecodeErrors, strictStruct } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import * as RA from 'fp-ts/lib/ReadonlyArray.js'
import * as t from 'io-ts'

// -------------------------------------------------------------------------------------
// codecs
// -------------------------------------------------------------------------------------

// Local leaf codecs instead of the branded ids of @maka/events: script steps are written by hand
// (and as literals in DEMO_SCRIPT), where brands would only add casts.
const nonEmptyString = new t.Type<string, string, unknown>(
  'non-empty string',
  (u): u is string => typeof u === 'string' && u.length > 0,
  (u, c) => (typeof u === 'string' && u.length > 0 ? t.success(u) : t.failure(u, c, 'must be a non-empty string')),
  t.identity,
)

const milliseconds = new t.Type<number, number, unknown>(
  'milliseconds',
  (u): u is number => typeof u === 'number' && Number.isSafeInteger(u) && u >= 0,
  (u, c) =>
    typeof u === 'number' && Number.isSafeInteger(u) && u >= 0
      ? t.success(u)
      : t.failure(u, c, 'must be a whole number of milliseconds, 0 or more'),
  t.identity,
)

const jsonObject = new t.Type<Record<string, unknown>, Record<string, unknown>, unknown>(
  'JSON object',
  (u): u is Record<string, unknown> => t.UnknownRecord.is(u),
  (u, c) => (t.UnknownRecord.is(u) ? t.success(u) : t.failure(u, c, 'must be a JSON object')),
  t.identity,
)

/**
 * `{"text": "…"}`: the model answers with this text and its step ends without a tool call.
 * @category codecs
 */
export const TextStep = strictStruct('TextStep', { text: t.string }, {})

/**
 * `{"toolCall": {"name": "…", "args": {…}}}`: the model asks for one tool, which then runs. `args`
 * may be left out and then means `{}`.
 * @category codecs
 */
export const ToolCallStep = strictStruct(
  'ToolCallStep',
  { toolCall: strictStruct('toolCall', { name: nonEmptyString }, { args: jsonObject }) },
  {},
)

/**
 * `{"delayMs": N}`: the model waits N milliseconds (abortable) and goes on with the next step.
 * @category codecs
 */
export const DelayStep = strictStruct('DelayStep', { delayMs: milliseconds }, {})

/**
 * `{"error": "…"}`: the model call fails with a `scripted_error`.
 * @category codecs
 */
export const ErrorStep = strictStruct('ErrorStep', { error: t.string }, {})

const members = { text: TextStep, toolCall: ToolCallStep, delayMs: DelayStep, error: ErrorStep } as const
const stepKinds = Object.keys(members) as ReadonlyArray<keyof typeof members>
const kindList = '"text", "toolCall", "delayMs" or "error"'

/**
 * One script step.
 * @category models
 */
export type ScriptStep =
  t.TypeOf<typeof TextStep> | t.TypeOf<typeof ToolCallStep> | t.TypeOf<typeof DelayStep> | t.TypeOf<typeof ErrorStep>

// The step kind is its one key, so the member is picked by that key and an error names the real
// problem rather than the last union member that happened to fail.
const kindOf = (u: object): ReadonlyArray<keyof typeof members> => stepKinds.filter((k) => Object.hasOwn(u, k))

/**
 * One script step, picked by its single key; anything else is rejected with a reason.
 * @category codecs
 */
export const ScriptStep = new t.Type<ScriptStep, ScriptStep, unknown>(
  'ScriptStep',
  (u): u is ScriptStep => typeof u === 'object' && u !== null && stepKinds.some((k) => members[k].is(u)),
  (u, c) => {
    if (typeof u !== 'object' || u === null || Array.isArray(u)) {
      return t.failure(u, c, `must be an object with one of the keys ${kindList}`)
    }
    const kinds = kindOf(u)
    const [kind] = kinds
    if (kind === undefined) {
      const unknown = Object.keys(u)[0]
      return t.failure(
        u,
        c,
        unknown === undefined
          ? `is empty; it needs one of the keys ${kindList}`
          : `has the unknown key "${unknown}"; a step has exactly one of the keys ${kindList}`,
      )
    }
    if (kinds.length > 1) {
      return t.failure(u, c, `has the keys ${kinds.map((k) => `"${k}"`).join(' and ')}; a step has exactly one`)
    }
    return members[kind].validate(u, c)
  },
  t.identity,
)

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Decodes a parsed script file; the Left is one sentence naming the step (counted from 1) and its problem.
 * @category codecs
 */
export const decodeScript = (json: unknown): E.Either<string, ReadonlyArray<ScriptStep>> =>
  Array.isArray(json)
    ? pipe(
        json,
        RA.traverseWithIndex(E.Applicative)((index, step) =>
          pipe(
            ScriptStep.decode(step),
            E.mapLeft((errors) => `Script step ${index + 1} ${describeStepErrors(errors)}.`),
          ),
        ),
      )
    : E.left('A script must be a JSON array of steps, such as [{"text": "Hello"}].')

/**
 * Parses and decodes the text of a script file (the `--script FILE` flag of the hosts).
 * @category codecs
 */
export const parseScript = (text: string): E.Either<string, ReadonlyArray<ScriptStep>> =>
  pipe(
    E.tryCatch(
      (): unknown => JSON.parse(text),
      // The parser's message may quote the file, which can hold prompts; only the fact is reported.
      () => 'The script is not valid JSON.',
    ),
    E.flatMap(decodeScript),
  )

// Errors of the step object itself read as "Script step 2 has …"; errors deeper in it name the path.
const describeStepErrors = (errors: t.Errors): string => {
  const sentence = describeDecodeErrors(errors)
  return errors[0]?.context.length === 1 ? sentence : `is invalid: ${sentence}`
}

/**
 * The built-in demo: look around, write a note, then answer.
 * @category models
 */
export const DEMO_SCRIPT: ReadonlyArray<ScriptStep> = [
  { toolCall: { name: 'list_dir', args: { path: '.' } } },
  {
    toolCall: {
      name: 'write_file',
      args: {
        path: 'notes.txt',
        content: 'Notes from the maka demo.\nThe workspace was listed before this file was written.\n',
      },
    },
  },
  // A script cannot see its tool results, so its answer claims nothing a denial could make untrue.
  { text: 'I listed the workspace and asked to write notes.txt; the tool result above says whether it was written.' },
]
