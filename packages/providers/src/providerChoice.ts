/**
 * Which model a host talks to: the scripted model (default; a `--script FILE` or a built-in
 * script) or an OpenAI-compatible endpoint. Reading and checking the flags happens here, before a
 * runtime exists, so a bad script, a missing `--model`, an unusable `--base-url`, a missing key or
 * a bad timeout is a `ProviderChoiceError` value (the CLI's exit 2) and nothing is written. A resume builds the provider its
 * source run recorded (`providerChoiceForResume`), with flags overriding it; `continuationProviderResolver`
 * is the same rule as the runtime's resolver port, its refusals as data.
 */
import { readFile } from 'node:fs/promises'
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { AgentRun } from '@maka/events'
import type { ModelProvider, RetryPolicy } from './ModelProvider.js'
import { readRetryPolicy } from './RetryPolicy.js'
import { DEFAULT_PROVIDER_TIMEOUT_MS, makeOpenAICompatibleProvider } from './openAICompatibleProvider.js'
import { type ScriptStep, parseScript } from './ScriptStep.js'
import { makeScriptedProvider } from './scriptedProvider.js'
import { type ProviderChoiceError, providerChoiceError } from './ProviderChoiceError.js'

/**
 * The provider flags shared by `run`, `chat`, `resume` and `demo`.
 * @category models
 */
export interface ProviderFlags {
  readonly script?: string
  readonly provider?: string
  readonly baseUrl?: string
  readonly model?: string
  /** The provider timeout in ms (`--timeout`); else `MAKA_PROVIDER_TIMEOUT_MS`; else the default. */
  readonly timeout?: string
}

/**
 * The model a host will use.
 * @category models
 */
export type ProviderChoice =
  | { readonly kind: 'scripted'; readonly steps: ReadonlyArray<ScriptStep> | null }
  | {
      readonly kind: 'openai-compatible'
      readonly baseUrl: string
      readonly model: string
      readonly apiKey: string
      readonly timeoutMs: number
      /** From `MAKA_PROVIDER_MAX_ATTEMPTS`, `MAKA_PROVIDER_RETRY_BASE_MS`, `MAKA_PROVIDER_RETRY_MAX_WAIT_MS`. */
      readonly retry?: RetryPolicy
    }

// setTimeout's ceiling; a larger value would fire at once.
const MAX_TIMEOUT_MS = 2_147_483_647

const readTimeout = (flags: ProviderFlags, env: NodeJS.ProcessEnv): E.Either<ProviderChoiceError, number> => {
  const [text, source] =
    flags.timeout !== undefined
      ? [flags.timeout, '--timeout']
      : env['MAKA_PROVIDER_TIMEOUT_MS'] !== undefined && env['MAKA_PROVIDER_TIMEOUT_MS'] !== ''
        ? [env['MAKA_PROVIDER_TIMEOUT_MS'], 'MAKA_PROVIDER_TIMEOUT_MS']
        : [undefined, '']
  if (text === undefined) return E.right(DEFAULT_PROVIDER_TIMEOUT_MS)
  const ms = /^\d{1,10}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN
  if (!Number.isInteger(ms) || ms < 1 || ms > MAX_TIMEOUT_MS) {
    return E.left(
      providerChoiceError(`${source} must be a whole number of milliseconds between 1 and ${MAX_TIMEOUT_MS}.`),
    )
  }
  return E.right(ms)
}

/**
 * Checks an endpoint base URL: http(s), parseable, and without credentials (the key belongs in
 * MAKA_API_KEY, and the URL is recorded in run headers). The URL itself is not echoed back.
 * @category constructors
 */
export const checkBaseUrl = (text: string, source = '--base-url'): E.Either<ProviderChoiceError, string> => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return E.left(providerChoiceError(`${source} is not a valid URL (expected e.g. http://127.0.0.1:8080/v1).`))
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return E.left(providerChoiceError(`${source} must be an http:// or https:// URL.`))
  }
  if (url.username !== '' || url.password !== '') {
    return E.left(providerChoiceError(`${source} must not hold credentials; put the key in MAKA_API_KEY.`))
  }
  return E.right(text)
}

/**
 * Reads the provider flags; `steps` is null when no script file was given.
 * @category constructors
 */
export const readProviderChoice =
  (flags: ProviderFlags, env: NodeJS.ProcessEnv = process.env): TE.TaskEither<ProviderChoiceError, ProviderChoice> =>
  () =>
    readChoice(flags, env)

const readChoice = async (
  flags: ProviderFlags,
  env: NodeJS.ProcessEnv,
): Promise<E.Either<ProviderChoiceError, ProviderChoice>> => {
  const provider = flags.provider ?? 'scripted'
  if (provider === 'openai-compatible') {
    if (flags.script !== undefined) return E.left(providerChoiceError('--script is only for the scripted provider.'))
    if (flags.baseUrl === undefined || flags.model === undefined) {
      return E.left(providerChoiceError('The openai-compatible provider needs --base-url URL and --model M.'))
    }
    const model = flags.model
    const baseUrl = checkBaseUrl(flags.baseUrl)
    if (E.isLeft(baseUrl)) return baseUrl
    const timeoutMs = readTimeout(flags, env)
    if (E.isLeft(timeoutMs)) return timeoutMs
    const retry = readRetryPolicy(env)
    if (E.isLeft(retry)) return retry
    const apiKey = env['MAKA_API_KEY']
    // Fail before anything is written rather than on the first request; a keyless local server
    // takes any value.
    if (apiKey === undefined || apiKey === '') {
      return E.left(
        providerChoiceError('The openai-compatible provider needs MAKA_API_KEY (any value for a server without keys).'),
      )
    }
    return E.right({
      kind: 'openai-compatible',
      baseUrl: baseUrl.right,
      model,
      apiKey,
      timeoutMs: timeoutMs.right,
      retry: retry.right,
    })
  }
  if (flags.timeout !== undefined) {
    const timeoutMs = readTimeout(flags, env)
    if (E.isLeft(timeoutMs)) return timeoutMs
  }
  if (provider !== 'scripted')
    return E.left(providerChoiceError(`Unknown provider "${provider}": use scripted or openai-compatible.`))
  if (flags.script === undefined) return E.right({ kind: 'scripted', steps: null })
  let text: string
  try {
    text = await readFile(flags.script, 'utf8')
  } catch {
    return E.left(providerChoiceError(`The script file ${flags.script} cannot be read.`))
  }
  const steps = parseScript(text)
  if (E.isLeft(steps)) return E.left(providerChoiceError(`The script file ${flags.script} is invalid: ${steps.left}`))
  return E.right({ kind: 'scripted', steps: steps.right })
}

/**
 * The scripted steps each kind of run gets when no script file was given.
 * @category models
 */
export interface ScriptDefaults {
  readonly turn: ReadonlyArray<ScriptStep>
  readonly continuation: ReadonlyArray<ScriptStep>
}

/**
 * A fresh provider per run (the executor asks once per run, so a script's cursor never leaks).
 * @category constructors
 */
export const providerForRuns =
  (choice: ProviderChoice, defaults: ScriptDefaults) =>
  (run: { readonly kind: 'turn' | 'continuation'; readonly runId: string }): ModelProvider => {
    if (choice.kind === 'openai-compatible') {
      return makeOpenAICompatibleProvider({
        baseUrl: choice.baseUrl,
        model: choice.model,
        apiKey: choice.apiKey,
        timeoutMs: choice.timeoutMs,
        ...(choice.retry === undefined ? {} : { retry: choice.retry }),
      })
    }
    return makeScriptedProvider({ steps: choice.steps ?? defaults[run.kind], toolCallIdPrefix: run.runId })
  }

/**
 * Checks the provider flags that need no file or key (`--base-url`, `--timeout`), so a command
 * that writes before it builds its provider (resume recovers first) refuses them before any write.
 * @category constructors
 */
export const checkProviderFlags = (
  flags: ProviderFlags,
  env: NodeJS.ProcessEnv = process.env,
): E.Either<ProviderChoiceError, void> =>
  pipe(
    flags.baseUrl === undefined ? E.right<ProviderChoiceError, unknown>(undefined) : checkBaseUrl(flags.baseUrl),
    E.flatMap(() => readTimeout(flags, env)),
    E.map(() => undefined),
  )

/**
 * True when any flag that picks the model was given (`--timeout` only tunes it).
 * @category guards
 */
export const providerFlagsGiven = (flags: ProviderFlags): boolean =>
  flags.provider !== undefined || flags.baseUrl !== undefined || flags.model !== undefined || flags.script !== undefined

const describeChoice = (choice: ProviderChoice): string =>
  choice.kind === 'scripted'
    ? choice.steps === null
      ? 'the scripted model'
      : 'the scripted model with the given script'
    : `openai-compatible model ${choice.model} at ${choice.baseUrl}`

// `withArticle` is false after "the recorded …", where a second "the" would not read.
const describeRecorded = (header: AgentRun, withArticle = true): string =>
  header.providerId === 'scripted'
    ? withArticle
      ? 'the scripted model'
      : 'scripted model'
    : `${header.providerId} model ${header.modelId}${header.providerBaseUrl === undefined ? '' : ` at ${header.providerBaseUrl}`}`

// The model a choice talks to is the one the run recorded: a script file is the scripted model's
// input, not another model, so resuming a scripted run with `--script` is no switch worth a note.
const sameModel = (choice: ProviderChoice, header: AgentRun): boolean =>
  choice.kind === 'scripted'
    ? header.providerId === 'scripted'
    : header.providerId === 'openai-compatible' &&
      choice.model === header.modelId &&
      choice.baseUrl === header.providerBaseUrl

/**
 * The provider a continuation of `source` runs with: the one its header records, with any provider
 * flag overriding the recorded value. When the flags make it another model than the recorded one,
 * `note` says so in one sentence (a host prints it whether or not it is verbose: the continuation
 * answers with another model than the turn it continues); a script file for a scripted run is no
 * other model and gets no note. Bad input when the recorded provider cannot be built here — checked
 * before the owner lock or the claim, so the boundary is not spent.
 * @category constructors
 */
export const providerChoiceForResume =
  (
    source: AgentRun,
    flags: ProviderFlags,
    env: NodeJS.ProcessEnv = process.env,
  ): TE.TaskEither<ProviderChoiceError, { readonly choice: ProviderChoice; readonly note?: string }> =>
  () =>
    choiceForResume(source, flags, env)

const choiceForResume = async (
  source: AgentRun,
  flags: ProviderFlags,
  env: NodeJS.ProcessEnv,
): Promise<E.Either<ProviderChoiceError, { readonly choice: ProviderChoice; readonly note?: string }>> => {
  const recorded = describeRecorded(source)
  const kind = flags.provider ?? source.providerId
  if (kind !== 'scripted' && kind !== 'openai-compatible') {
    return E.left(
      providerChoiceError(
        `The interrupted run used ${recorded}, which cannot be built here; pass --provider and its flags to choose a model.`,
      ),
    )
  }
  const sameKind = kind === source.providerId
  const baseUrl = flags.baseUrl ?? (sameKind ? source.providerBaseUrl : undefined)
  if (kind === 'openai-compatible' && baseUrl === undefined && flags.provider === undefined) {
    return E.left(
      providerChoiceError(`The interrupted run used ${recorded} but recorded no base URL; pass --base-url URL.`),
    )
  }
  if (kind === 'openai-compatible' && !providerFlagsGiven(flags)) {
    if (env['MAKA_API_KEY'] === undefined || env['MAKA_API_KEY'] === '') {
      return E.left(
        providerChoiceError(
          `The interrupted run used ${recorded}; set MAKA_API_KEY to resume it (or pass provider flags to choose another model).`,
        ),
      )
    }
  }
  const effective: ProviderFlags = {
    ...flags,
    provider: kind,
    ...(baseUrl === undefined ? {} : { baseUrl }),
    ...(kind === 'openai-compatible' && sameKind ? { model: flags.model ?? source.modelId } : {}),
  }
  const read = await readChoice(effective, env)
  if (E.isLeft(read)) return read
  const choice = read.right
  return E.right(
    sameModel(choice, source) || !providerFlagsGiven(flags)
      ? { choice }
      : {
          choice,
          note: `Resuming with ${describeChoice(choice)} from the flags instead of the recorded ${describeRecorded(source, false)}.`,
        },
  )
}

/**
 * The runtime's continuation provider resolver over `providerChoiceForResume`: given the source
 * header planning read, a fresh provider per run of the resolved choice and its note, or — when the
 * model cannot be built here — the `ProviderChoiceError`'s sentence as a Left (a throw is a bug and
 * propagates). Every host hands this to the runtime, so none captures a choice to mutate later.
 * @category constructors
 */
export const continuationProviderResolver =
  (flags: ProviderFlags, defaults: ScriptDefaults, env: NodeJS.ProcessEnv = process.env) =>
  async (request: {
    readonly source: AgentRun
  }): Promise<
    E.Either<
      { readonly message: string },
      {
        readonly providerFor: (run: { readonly kind: 'turn' | 'continuation'; readonly runId: string }) => ModelProvider
        readonly note?: string
      }
    >
  > => {
    const resolved = await choiceForResume(request.source, flags, env)
    return E.isLeft(resolved)
      ? E.left({ message: resolved.left.message })
      : E.right({
          providerFor: providerForRuns(resolved.right.choice, defaults),
          ...(resolved.right.note === undefined ? {} : { note: resolved.right.note }),
        })
  }
