/**
 * The user's settings file, `config.toml` in the data home (`--data-dir`, else `$MAKA_HOME`, else
 * `~/.maka`), in TOML like Codex CLI's `~/.codex/config.toml` (decision 185): provider profiles (the
 * provider, its base URL, its model and the *name* of the environment variable that holds its key —
 * never a key), the default profile, the default permission mode and the safe-resume flag. Flags win
 * over the environment, the environment over this file, the file over the built-in defaults.
 *
 * A file that is not TOML, holds a key maka does not know, or a value of the wrong kind is bad input
 * naming the file and the key (exit 2); `setConfigValue` checks the whole file before it replaces it
 * (a temporary file renamed over the old one), so a refused `maka config set` writes nothing.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { parse, stringify } from 'smol-toml'
import { errnoCode } from '@maka/stores'
import { checkBaseUrl } from './providerChoice.js'
import { BadInputError, WriteFailedError } from './ExitCode.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A permission mode as a setting: `ask` the person, `allow` or `deny` tool calls that change the workspace.
 * @category models
 */
export type PermissionSetting = 'ask' | 'allow' | 'deny'

/**
 * One provider profile: which model, where, and which environment variable holds its key.
 * @category models
 */
export interface ProviderProfile {
  readonly provider?: 'scripted' | 'openai-compatible'
  readonly baseUrl?: string
  readonly model?: string
  /** The name of the environment variable that holds the key (default `MAKA_API_KEY`); never the key. */
  readonly apiKeyEnv?: string
}

/**
 * The settings of `config.toml`; every one is optional.
 * @category models
 */
export interface UserConfig {
  /** The profile new sessions use when no provider flag, `--profile` or `MAKA_PROFILE` says otherwise. */
  readonly profile?: string
  readonly permissionMode?: PermissionSetting
  /** Safe-boundary resume, when `MAKA_RUNTIME_SAFE_BOUNDARY_RESUME` is not set. */
  readonly safeResume?: boolean
  readonly profiles: Readonly<Record<string, ProviderProfile>>
}

/**
 * The settings file and what it holds (an absent file holds nothing).
 * @category models
 */
export interface LoadedConfig {
  readonly file: string
  readonly exists: boolean
  readonly config: UserConfig
}

const PROFILE_KEYS = ['provider', 'baseUrl', 'model', 'apiKeyEnv'] as const
const TOP_KEYS = ['profile', 'permissionMode', 'safeResume'] as const
const PROFILE_NAME = /^[A-Za-z0-9_-]{1,64}$/
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/

/**
 * Every key `maka config` reads and writes; `NAME` is a profile's name.
 * @category models
 */
export const CONFIG_KEYS = [
  'profile',
  'permissionMode',
  'safeResume',
  ...PROFILE_KEYS.map((key) => `profiles.NAME.${key}`),
] as const

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Where the settings file of a data home lives.
 * @category constructors
 */
export const configFileOf = (dataHome: string): string => join(dataHome, 'config.toml')

type KeyPath =
  | { readonly _tag: 'top'; readonly key: (typeof TOP_KEYS)[number] }
  | { readonly _tag: 'profile'; readonly name: string; readonly key: (typeof PROFILE_KEYS)[number] }

const isOneOf = <K extends string>(keys: ReadonlyArray<K>, key: string): key is K =>
  (keys as ReadonlyArray<string>).includes(key)

const parseKey = (key: string): E.Either<string, KeyPath> => {
  if (isOneOf(TOP_KEYS, key)) return E.right({ _tag: 'top', key })
  const match = /^profiles\.([^.]+)\.([^.]+)$/.exec(key)
  if (match !== null) {
    const [, name = '', field = ''] = match
    if (!PROFILE_NAME.test(name))
      return E.left(`the profile name "${name}" may only use 1 to 64 letters, digits, _ or -`)
    if (isOneOf(PROFILE_KEYS, field)) return E.right({ _tag: 'profile', name, key: field })
  }
  return E.left(`unknown key "${key}" (known: ${CONFIG_KEYS.join(', ')})`)
}

// A value of one key, checked; `text` values come from `maka config set`, others from the file.
const checkValue = (path: KeyPath, value: unknown): E.Either<string, string | boolean> => {
  const name = path._tag === 'top' ? path.key : `profiles.${path.name}.${path.key}`
  const text = typeof value === 'string' ? value : null
  switch (path.key) {
    case 'safeResume':
      if (typeof value === 'boolean') return E.right(value)
      if (text === 'true' || text === 'false') return E.right(text === 'true')
      return E.left(`${name} must be true or false`)
    case 'permissionMode':
      return text === 'ask' || text === 'allow' || text === 'deny'
        ? E.right(text)
        : E.left(`${name} must be ask, allow or deny`)
    case 'profile':
      return text !== null && PROFILE_NAME.test(text)
        ? E.right(text)
        : E.left(`${name} must name a profile (1 to 64 letters, digits, _ or -)`)
    case 'provider':
      return text === 'scripted' || text === 'openai-compatible'
        ? E.right(text)
        : E.left(`${name} must be scripted or openai-compatible`)
    case 'baseUrl': {
      if (text === null) return E.left(`${name} must be an http:// or https:// URL`)
      const checked = checkBaseUrl(text, name)
      return E.isLeft(checked) ? E.left(checked.left.message.replace(/\.$/, '')) : E.right(text)
    }
    case 'model':
      return text !== null && text.trim() !== '' && !/[\r\n]/.test(text)
        ? E.right(text)
        : E.left(`${name} must be a model name`)
    case 'apiKeyEnv':
      return text !== null && ENV_NAME.test(text)
        ? E.right(text)
        : E.left(`${name} must be the name of an environment variable (e.g. OPENAI_API_KEY), never the key itself`)
  }
}

const isTable = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)

/**
 * Checks parsed TOML as settings: every key known, every value of its kind, the default profile defined.
 * @category constructors
 */
export const decodeUserConfig = (raw: unknown): E.Either<string, UserConfig> => {
  if (!isTable(raw)) return E.left('the file is not a table of settings')
  const top: Record<string, unknown> = {}
  const profiles: Record<string, ProviderProfile> = {}
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'profiles') {
      if (!isTable(value)) return E.left('profiles must be a table of [profiles.NAME] tables')
      for (const [name, table] of Object.entries(value)) {
        if (!PROFILE_NAME.test(name))
          return E.left(`the profile name "${name}" may only use 1 to 64 letters, digits, _ or -`)
        if (!isTable(table)) return E.left(`profiles.${name} must be a table`)
        const profile: Record<string, unknown> = {}
        for (const [field, fieldValue] of Object.entries(table)) {
          const path = parseKey(`profiles.${name}.${field}`)
          if (E.isLeft(path)) return path
          const checked = checkValue(path.right, fieldValue)
          if (E.isLeft(checked)) return checked
          profile[field] = checked.right
        }
        profiles[name] = profile
      }
      continue
    }
    const path = parseKey(key)
    if (E.isLeft(path)) return path
    const checked = checkValue(path.right, value)
    if (E.isLeft(checked)) return checked
    top[key] = checked.right
  }
  const config = { ...top, profiles } as UserConfig
  if (config.profile !== undefined && profiles[config.profile] === undefined) {
    return E.left(`profile names "${config.profile}", which has no [profiles.${config.profile}] table`)
  }
  return E.right(config)
}

const EMPTY: UserConfig = { profiles: {} }

/**
 * Reads and checks the settings of a data home; an absent file is no settings. A file that cannot be
 * read, is not TOML or holds a bad key is bad input naming the file (exit 2).
 * @category constructors
 */
export const loadUserConfig = async (dataHome: string): Promise<LoadedConfig> => {
  const file = configFileOf(dataHome)
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    const code = errnoCode(error)
    if (code === 'ENOENT' || code === 'ENOTDIR') return { file, exists: false, config: EMPTY }
    throw new BadInputError(`The settings file ${file} cannot be read (${code ?? 'unknown error'}).`)
  }
  let raw: unknown
  try {
    raw = parse(text)
  } catch (error) {
    // smol-toml's message names the line and column; its code frame (which quotes the file) is dropped.
    const first = error instanceof Error ? (error.message.split('\n')[0] ?? '') : ''
    throw new BadInputError(`The settings file ${file} is not valid TOML: ${first.replace(/\.$/, '')}.`)
  }
  const config = decodeUserConfig(raw)
  if (E.isLeft(config)) throw new BadInputError(`The settings file ${file} is invalid: ${config.left}.`)
  return { file, exists: true, config: config.right }
}

/**
 * The value a key holds in the settings (undefined when it is not set); an unknown key is bad input.
 * @category constructors
 */
export const getConfigValue = (loaded: LoadedConfig, key: string): string | boolean | undefined => {
  const path = parseKey(key)
  if (E.isLeft(path)) throw new BadInputError(`Cannot read ${key} from ${loaded.file}: ${path.left}.`)
  return path.right._tag === 'top'
    ? loaded.config[path.right.key]
    : loaded.config.profiles[path.right.name]?.[path.right.key]
}

/**
 * Every key the settings hold, as `key` / value pairs in a stable order.
 * @category constructors
 */
export const configEntries = (config: UserConfig): ReadonlyArray<readonly [string, string | boolean]> => [
  ...TOP_KEYS.flatMap((key) => (config[key] === undefined ? [] : [[key, config[key]] as const])),
  ...Object.keys(config.profiles)
    .sort()
    .flatMap((name) =>
      PROFILE_KEYS.flatMap((key) => {
        const value = config.profiles[name]?.[key]
        return value === undefined ? [] : [[`profiles.${name}.${key}`, value] as const]
      }),
    ),
]

const toToml = (config: UserConfig): string => {
  const { profiles, ...top } = config
  const body: Record<string, unknown> = { ...top }
  if (Object.keys(profiles).length > 0) body['profiles'] = profiles
  return `# maka settings (maka config set KEY VALUE); keys: ${CONFIG_KEYS.join(', ')}\n${stringify(body)}\n`
}

/**
 * Sets (or, with `value` undefined, removes) one key and rewrites the file whole: the new settings
 * are checked first, then written to a temporary file renamed over the old one. A bad key or value,
 * or a file that was already bad, is bad input and nothing is written. Comments are not kept.
 * @category constructors
 */
export const setConfigValue = async (dataHome: string, key: string, value: string | undefined): Promise<UserConfig> => {
  const loaded = await loadUserConfig(dataHome)
  const path = parseKey(key)
  if (E.isLeft(path)) throw new BadInputError(`Cannot set ${key} in ${loaded.file}: ${path.left}.`)
  let checked: string | boolean | undefined
  if (value !== undefined) {
    const result = checkValue(path.right, value)
    if (E.isLeft(result)) throw new BadInputError(`Cannot set ${key} in ${loaded.file}: ${result.left}.`)
    checked = result.right
  }
  const next: Record<string, unknown> = { ...loaded.config, profiles: { ...loaded.config.profiles } }
  const profiles = next['profiles'] as Record<string, Record<string, unknown>>
  if (path.right._tag === 'top') {
    if (checked === undefined) delete next[path.right.key]
    else next[path.right.key] = checked
  } else {
    const profile = { ...(profiles[path.right.name] ?? {}) }
    if (checked === undefined) delete profile[path.right.key]
    else profile[path.right.key] = checked
    if (Object.keys(profile).length === 0) delete profiles[path.right.name]
    else profiles[path.right.name] = profile
  }
  const decoded = decodeUserConfig(next)
  if (E.isLeft(decoded)) throw new BadInputError(`Cannot set ${key} in ${loaded.file}: ${decoded.left}.`)
  const temporary = `${loaded.file}.${process.pid}.tmp`
  try {
    await mkdir(dataHome, { recursive: true })
    await writeFile(temporary, toToml(decoded.right), { mode: 0o600 })
    await rename(temporary, loaded.file)
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {})
    throw new WriteFailedError(
      `could not write the settings file ${loaded.file} (${errnoCode(error) ?? 'unknown error'}); nothing was changed.`,
    )
  }
  return decoded.right
}

// -------------------------------------------------------------------------------------
// settings in force
// -------------------------------------------------------------------------------------

/**
 * The one line `run` and `chat` print when safe resume is off: what that means and how to turn it on.
 * @category constructors
 */
export const safeResumeOffHint =
  'maka: safe resume is off, so `maka resume` cannot continue this session if a turn is interrupted; turn it on with `maka config set safeResume true` (or MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1).'

/**
 * Safe-boundary resume: `MAKA_RUNTIME_SAFE_BOUNDARY_RESUME` when it is set (`1` on, anything else
 * off), else the settings' `safeResume`, else off.
 * @category guards
 */
export const safeResumeSetting = (config: UserConfig, env: NodeJS.ProcessEnv = process.env): boolean => {
  const flag = env['MAKA_RUNTIME_SAFE_BOUNDARY_RESUME']
  if (flag !== undefined && flag !== '') return flag === '1'
  return config.safeResume === true
}
