/**
 * Which model and permission mode a command runs with, and the one line that says so (decision 186).
 * A session keeps the setup its latest run recorded (provider, model, base URL, permission mode):
 * `run --session`, `chat --session`, a new message in `maka ui` and `resume` reuse it unless a flag
 * says otherwise. A new session takes, in order: the flags, the environment (`MAKA_PROFILE`), the
 * settings file (`profile`, `permissionMode`), the defaults (the scripted model; `deny` for a command
 * that cannot ask, `ask` for one that can). A profile's key is read from the environment variable it
 * names (`apiKeyEnv`, else `MAKA_API_KEY`); the key itself is never in a file, a header or a line.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { AgentRun } from '@maka/events'
import type { ContinuationProviderResolver, PermissionMode } from '@maka/executor'
import { compareRunCreation } from '@maka/planner'
import { type SessionStores, listSessionRuns } from '@maka/sessions'
import { BadInputError } from './ExitCode.js'
import type { ModelFlags } from './CommandFlags.js'
import {
  type ProviderChoice,
  type ProviderFlags,
  type ScriptDefaults,
  providerChoiceForResume,
  providerFlagsGiven,
  providerForRuns,
  readProviderChoice,
} from './providerChoice.js'
import type { LoadedConfig, ProviderProfile } from './userConfig.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The setup a command runs with, and the line that says which.
 * @category models
 */
export interface ResolvedSetup {
  readonly choice: ProviderChoice
  readonly permissionMode: PermissionMode
  /** `maka: using <model> (<from where>) · permission mode <mode> (<from where>)`. */
  readonly line: string
}

/**
 * What a command's setup is resolved from.
 * @category models
 */
export interface SetupInput {
  readonly flags: ModelFlags
  readonly settings: LoadedConfig
  /** The session's latest run, when the command works on a session that has one. */
  readonly recorded: AgentRun | null
  /** Whether the command can put a question to the person (`chat`, `maka ui`). */
  readonly canAsk: boolean
  readonly env?: NodeJS.ProcessEnv
}

const DEFAULT_KEY_ENV = 'MAKA_API_KEY'

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The latest run of a session (any kind, by creation), whose header records the session's setup;
 * null for a session with no readable run (or that does not exist yet).
 * @category constructors
 */
export const recordedSetupOf = async (stores: SessionStores, sessionId: string): Promise<AgentRun | null> => {
  const runs = await listSessionRuns(stores, sessionId)
  if (E.isLeft(runs)) return null
  const headers = runs.right.flatMap((run) => ('header' in run ? [run.header] : [])).sort(compareRunCreation)
  return headers[headers.length - 1] ?? null
}

/**
 * How a setup names a model in its line: never a key, a script's content or a prompt.
 * @category constructors
 */
export const describeModel = (choice: ProviderChoice): string =>
  choice.kind === 'scripted'
    ? choice.steps === null
      ? 'the scripted model'
      : 'the scripted model with the given script'
    : `openai-compatible model ${choice.model} at ${choice.baseUrl}`

const profileNamed = (settings: LoadedConfig, name: string, how: string): ProviderProfile => {
  const profile = settings.config.profiles[name]
  if (profile === undefined) {
    throw new BadInputError(`${how} names the profile "${name}", which ${settings.file} does not define.`)
  }
  return profile
}

// The profile of the settings that describes a recorded provider, for the name of its key's variable.
const profileFor = (settings: LoadedConfig, providerId: string, baseUrl: string | undefined) =>
  Object.values(settings.config.profiles).find(
    (profile) => (profile.provider ?? 'scripted') === providerId && profile.baseUrl === baseUrl,
  )

// The environment a provider reads: MAKA_API_KEY holds the key of the variable the profile names.
const envWithKey = (
  env: NodeJS.ProcessEnv,
  keyEnv: string | undefined,
  needsKey: boolean,
  whose: string,
): NodeJS.ProcessEnv => {
  if (keyEnv === undefined || keyEnv === DEFAULT_KEY_ENV) return env
  const key = env[keyEnv]
  if (needsKey && (key === undefined || key === '')) {
    throw new BadInputError(
      `${whose} reads its key from ${keyEnv}, which is not set (any value for a server without keys).`,
    )
  }
  return { ...env, [DEFAULT_KEY_ENV]: key ?? '' }
}

const flagsOfProfile = (profile: ProviderProfile): ProviderFlags => ({
  ...(profile.provider === undefined ? {} : { provider: profile.provider }),
  ...(profile.baseUrl === undefined ? {} : { baseUrl: profile.baseUrl }),
  ...(profile.model === undefined ? {} : { model: profile.model }),
})

const flagsOfRun = (run: AgentRun): ProviderFlags => ({
  provider: run.providerId,
  ...(run.providerId === 'openai-compatible' ? { model: run.modelId } : {}),
  ...(run.providerBaseUrl === undefined ? {} : { baseUrl: run.providerBaseUrl }),
})

const explicitModelFlags = (flags: ModelFlags): ProviderFlags => ({
  ...(flags.script === undefined ? {} : { script: flags.script }),
  ...(flags.provider === undefined ? {} : { provider: flags.provider }),
  ...(flags.baseUrl === undefined ? {} : { baseUrl: flags.baseUrl }),
  ...(flags.model === undefined ? {} : { model: flags.model }),
  ...(flags.timeout === undefined ? {} : { timeout: flags.timeout }),
})

/**
 * The permission mode a command runs with, and where it comes from: `--yes` or `--permission-mode`,
 * else the recorded run's, else the settings', else `ask` where the command can ask and `deny` where
 * it cannot. A command that cannot ask turns a recorded or configured `ask` into `deny`; asking it
 * for `ask` by flag is bad input.
 * @category constructors
 */
export const resolvePermission = (input: {
  readonly flags: Pick<ModelFlags, 'yes' | 'permissionMode'>
  readonly settings: LoadedConfig
  readonly recorded: { readonly permissionMode?: PermissionMode; readonly label: string } | null
  readonly canAsk: boolean
}): { readonly mode: PermissionMode; readonly from: string } => {
  const { flags, canAsk } = input
  if (flags.yes === true && flags.permissionMode !== undefined && flags.permissionMode !== 'allow') {
    throw new BadInputError(
      `--yes means --permission-mode allow; it cannot be given with --permission-mode ${flags.permissionMode}.`,
    )
  }
  if (flags.yes === true) return { mode: 'allow', from: '--yes' }
  if (flags.permissionMode !== undefined) {
    if (flags.permissionMode === 'ask' && !canAsk) {
      throw new BadInputError('This command cannot ask: use --permission-mode allow or deny.')
    }
    return { mode: flags.permissionMode, from: '--permission-mode' }
  }
  const headless = (mode: PermissionMode, from: string) =>
    mode === 'ask' && !canAsk
      ? { mode: 'deny' as const, from: `${from} asks; this command cannot ask` }
      : { mode, from }
  const recorded = input.recorded
  if (recorded?.permissionMode !== undefined) return headless(recorded.permissionMode, recorded.label)
  const configured = input.settings.config.permissionMode
  if (configured !== undefined) return headless(configured, `settings ${input.settings.file}`)
  return { mode: canAsk ? 'ask' : 'deny', from: 'default' }
}

const setupLine = (model: string, modelFrom: string, mode: PermissionMode, modeFrom: string): string =>
  `maka: using ${model} (${modelFrom}) · permission mode ${mode} (${modeFrom})`

/**
 * The setup of a turn: its model and permission mode, and the line that says which. Checked before
 * anything is written: a profile that is not defined, a key variable that is not set, a script file
 * that cannot be read are bad input (exit 2).
 * @category constructors
 */
export const resolveTurnSetup = async (input: SetupInput): Promise<ResolvedSetup> => {
  const env = input.env ?? process.env
  const { flags, settings, recorded } = input
  const explicit = explicitModelFlags(flags)
  const recordedLabel = recorded === null ? '' : `recorded in session ${recorded.sessionId}`
  let base: ProviderFlags = {}
  let from = 'default'
  let keyEnv: string | undefined
  let whose = 'The model'
  if (flags.profile !== undefined) {
    const profile = profileNamed(settings, flags.profile, '--profile')
    base = flagsOfProfile(profile)
    keyEnv = profile.apiKeyEnv
    from = `profile ${flags.profile}`
    whose = `The profile ${flags.profile}`
  } else if (
    recorded !== null &&
    (!providerFlagsGiven(explicit) || (explicit.provider ?? recorded.providerId) === recorded.providerId)
  ) {
    // Flags that keep the recorded provider tune it (another --model, a --script for the scripted model).
    base = flagsOfRun(recorded)
    keyEnv = profileFor(settings, recorded.providerId, recorded.providerBaseUrl)?.apiKeyEnv
    from = providerFlagsGiven(explicit) ? 'flags' : recordedLabel
    whose = `The ${recorded.providerId} model the session recorded`
  } else if (providerFlagsGiven(explicit)) {
    from = 'flags'
  } else {
    const fromEnv = env['MAKA_PROFILE']
    const name = fromEnv !== undefined && fromEnv !== '' ? fromEnv : settings.config.profile
    if (name !== undefined) {
      const how = name === fromEnv ? 'MAKA_PROFILE' : `profile in ${settings.file}`
      const profile = profileNamed(settings, name, how)
      base = flagsOfProfile(profile)
      keyEnv = profile.apiKeyEnv
      from = `profile ${name}`
      whose = `The profile ${name}`
    }
  }
  const effective: ProviderFlags = { ...base, ...explicit }
  const needsKey = (effective.provider ?? 'scripted') === 'openai-compatible'
  // Flags naming an endpoint a profile describes read the key from the variable that profile names.
  keyEnv ??= needsKey ? profileFor(settings, 'openai-compatible', effective.baseUrl)?.apiKeyEnv : undefined
  const read = await readProviderChoice(effective, envWithKey(env, keyEnv, needsKey, whose))()
  if (E.isLeft(read)) {
    const where = from.startsWith('profile ')
      ? ` (${from} in ${settings.file})`
      : from === recordedLabel
        ? ` (${from}; pass --provider and its flags to choose another model)`
        : ''
    throw new BadInputError(`${read.left.message.replace(/\.$/, '')}${where}.`)
  }
  const permission = resolvePermission({
    flags,
    settings,
    recorded:
      recorded === null
        ? null
        : {
            ...(recorded.permissionMode === undefined ? {} : { permissionMode: recorded.permissionMode }),
            label: recordedLabel,
          },
    canAsk: input.canAsk,
  })
  return {
    choice: read.right,
    permissionMode: permission.mode,
    line: setupLine(describeModel(read.right), from, permission.mode, permission.from),
  }
}

/**
 * The runtime's continuation resolver over the source run's recorded setup: the model its header
 * records (provider flags override it, `@maka/providers`' rule, with its note), the key from the
 * variable a matching profile names, and the permission mode the run recorded (a flag overrides it).
 * `onSetup` receives the line once the setup is known, before anything is written.
 * @category constructors
 */
export const sessionContinuationResolver =
  (input: {
    readonly flags: ModelFlags
    readonly settings: LoadedConfig
    readonly canAsk: boolean
    readonly defaults: ScriptDefaults
    readonly onSetup: (line: string) => void
    readonly env?: NodeJS.ProcessEnv
  }): ContinuationProviderResolver =>
  async ({ source }) => {
    const env = input.env ?? process.env
    const explicit = explicitModelFlags(input.flags)
    let runEnv = env
    let permission: { readonly mode: PermissionMode; readonly from: string }
    try {
      const profile =
        input.flags.profile === undefined ? undefined : profileNamed(input.settings, input.flags.profile, '--profile')
      const flags = profile === undefined ? explicit : { ...flagsOfProfile(profile), ...explicit }
      const kind = flags.provider ?? source.providerId
      const keyEnv = (profile ?? profileFor(input.settings, source.providerId, source.providerBaseUrl))?.apiKeyEnv
      runEnv = envWithKey(env, keyEnv, kind === 'openai-compatible', `The ${kind} model`)
      permission = resolvePermission({
        flags: input.flags,
        settings: input.settings,
        recorded: {
          ...(source.permissionMode === undefined ? {} : { permissionMode: source.permissionMode }),
          label: `recorded by run ${source.runId}`,
        },
        canAsk: input.canAsk,
      })
      const resolved = await providerChoiceForResume(source, flags, runEnv)()
      if (E.isLeft(resolved)) return E.left({ message: resolved.left.message })
      const modelFrom = resolved.right.note === undefined ? `recorded by run ${source.runId}` : 'flags'
      input.onSetup(setupLine(describeModel(resolved.right.choice), modelFrom, permission.mode, permission.from))
      return E.right({
        providerFor: providerForRuns(resolved.right.choice, input.defaults),
        ...(resolved.right.note === undefined ? {} : { note: resolved.right.note }),
        permissionMode: permission.mode,
      })
    } catch (error) {
      if (error instanceof BadInputError) return E.left({ message: error.message })
      throw error
    }
  }
