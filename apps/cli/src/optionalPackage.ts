/**
 * The packages only some users need — the SQLite driver, the PostgreSQL adapter and driver, the web
 * UI — are optional peers of `@maka/cli`, so an install for JSONL stores compiles no native addon
 * and fetches no database client. They are loaded when a command first needs them; when one is not
 * installed, the command stops with exit 2 and one sentence naming what to install.
 */
import { BadInputError } from './ExitCode.js'

/**
 * What a missing optional package is for, and the packages (with versions) that provide it.
 * @category models
 */
export interface OptionalFeature {
  /** For the sentence: "The SQLite store needs …". */
  readonly feature: string
  readonly packages: ReadonlyArray<{ readonly name: string; readonly version: string }>
}

/**
 * The SQLite store's driver.
 * @category models
 */
export const SQLITE_DRIVER: OptionalFeature = {
  feature: 'The SQLite store (sqlite:FILE)',
  packages: [{ name: 'better-sqlite3', version: '12.11.1' }],
}

/**
 * The PostgreSQL store's driver (the adapter is bundled with the commands).
 * @category models
 */
export const POSTGRES_DRIVER: OptionalFeature = {
  feature: 'The PostgreSQL store (postgres://…)',
  packages: [{ name: 'pg', version: '8.23.1' }],
}

/**
 * The web UI `maka ui` serves.
 * @category models
 */
export const WEB_UI: OptionalFeature = {
  feature: 'maka ui',
  packages: [{ name: '@maka/session-ui', version: '0.1.0' }],
}

const notFoundCodes = new Set(['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND'])

// Node names the package it could not find in the message of both its loaders.
const missingPackageOf = (error: unknown, feature: OptionalFeature): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string' || !notFoundCodes.has(code) || !(error instanceof Error)) return undefined
  return feature.packages.find((p) => error.message.includes(`'${p.name}`) || error.message.includes(`"${p.name}`))
    ?.name
}

/**
 * The sentence for a feature whose packages are not installed.
 * @category constructors
 */
export const missingPackageSentence = (feature: OptionalFeature): string => {
  const names = feature.packages.map((p) => p.name)
  const specs = feature.packages.map((p) => `${p.name}@${p.version}`).join(' ')
  return `${feature.feature} needs ${names.join(' and ')}, which ${names.length === 1 ? 'is' : 'are'} not installed: run \`npm install -g ${specs}\` (beside @maka/cli) and try again.`
}

/**
 * Runs `load`; a package of `feature` that cannot be found becomes a `BadInputError` (exit 2) with
 * the sentence above. Any other failure propagates.
 * @category constructors
 */
export const loadOptional = async <A>(feature: OptionalFeature, load: () => Promise<A>): Promise<A> => {
  try {
    return await load()
  } catch (error) {
    if (missingPackageOf(error, feature) !== undefined) throw new BadInputError(missingPackageSentence(feature))
    throw error
  }
}
