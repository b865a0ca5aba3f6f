/**
 * Which model the host talks to: the scripted model (default; a `--script FILE` or a built-in
 * script) or an OpenAI-compatible endpoint. Reading and checking the flags happens here, before a
 * runtime exists, so a bad script or a missing `--model` is bad input (exit 2).
 */
import { readFile } from 'node:fs/promises'
import * as E from 'fp-ts/lib/Either.js'
import {
  type ModelProvider,
  type ScriptStep,
  makeOpenAICompatibleProvider,
  makeScriptedProvider,
  parseScript,
} from '@maka/providers'
import { BadInputError } from './ExitCode.js'

/**
 * The provider flags shared by `run`, `chat`, `resume` and `demo`.
 * @category models
 */
export interface ProviderFlags {
  readonly script?: string
  readonly provider?: string
  readonly baseUrl?: string
  readonly model?: string
}

/**
 * The model a host will use.
 * @category models
 */
export type ProviderChoice =
  | { readonly kind: 'scripted'; readonly steps: ReadonlyArray<ScriptStep> | null }
  | { readonly kind: 'openai-compatible'; readonly baseUrl: string; readonly model: string; readonly apiKey?: string }

/**
 * Reads the provider flags; `steps` is null when no script file was given.
 * @category constructors
 */
export const readProviderChoice = async (
  flags: ProviderFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ProviderChoice> => {
  const provider = flags.provider ?? 'scripted'
  if (provider === 'openai-compatible') {
    if (flags.script !== undefined) throw new BadInputError('--script is only for the scripted provider.')
    if (flags.baseUrl === undefined || flags.model === undefined) {
      throw new BadInputError('The openai-compatible provider needs --base-url URL and --model M.')
    }
    const apiKey = env['MAKA_API_KEY']
    return {
      kind: 'openai-compatible',
      baseUrl: flags.baseUrl,
      model: flags.model,
      ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
    }
  }
  if (provider !== 'scripted')
    throw new BadInputError(`Unknown provider "${provider}": use scripted or openai-compatible.`)
  if (flags.script === undefined) return { kind: 'scripted', steps: null }
  let text: string
  try {
    text = await readFile(flags.script, 'utf8')
  } catch {
    throw new BadInputError(`The script file ${flags.script} cannot be read.`)
  }
  const steps = parseScript(text)
  if (E.isLeft(steps)) throw new BadInputError(`The script file ${flags.script} is invalid: ${steps.left}`)
  return { kind: 'scripted', steps: steps.right }
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
        ...(choice.apiKey === undefined ? {} : { apiKey: choice.apiKey }),
      })
    }
    return makeScriptedProvider({ steps: choice.steps ?? defaults[run.kind], toolCallIdPrefix: run.runId })
  }
