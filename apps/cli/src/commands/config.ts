/**
 * `maka config get KEY`, `maka config set KEY VALUE`, `maka config unset KEY`, `maka config list
 * [--json]`: the settings file of the data home (`config.toml`, see `userConfig.ts`). A bad file, an
 * unknown key or a bad value is one stderr line naming the file and the key, exit 2, nothing written.
 */
import { ExitCode } from '../ExitCode.js'
import type { ConfigListFlags, GlobalFlags } from '../CommandFlags.js'
import { resolveDataDir } from '../hostInput.js'
import { configEntries, getConfigValue, loadUserConfig, setConfigValue } from '../userConfig.js'
import { say, sayJson } from './commandContext.js'

/**
 * Prints the value of one key; exit 1 (and nothing printed) when the file does not set it.
 * @category constructors
 */
export const configGet = async (key: string, globals: GlobalFlags): Promise<ExitCode> => {
  const loaded = await loadUserConfig(resolveDataDir(globals.dataDir))
  const value = getConfigValue(loaded, key)
  if (value === undefined) return ExitCode.failed
  say(String(value))
  return ExitCode.ok
}

/**
 * Sets one key (or removes it, `value` undefined) and says what the file now holds for it.
 * @category constructors
 */
export const configSet = async (key: string, value: string | undefined, globals: GlobalFlags): Promise<ExitCode> => {
  const home = resolveDataDir(globals.dataDir)
  await setConfigValue(home, key, value)
  const loaded = await loadUserConfig(home)
  say(
    value === undefined
      ? `${key} removed from ${loaded.file}`
      : `${key} = ${String(getConfigValue(loaded, key))} in ${loaded.file}`,
  )
  return ExitCode.ok
}

/**
 * Lists every key the file sets, one `key = value` line each, after a line naming the file.
 * @category constructors
 */
export const configList = async (flags: ConfigListFlags, globals: GlobalFlags): Promise<ExitCode> => {
  const loaded = await loadUserConfig(resolveDataDir(globals.dataDir))
  if (flags.json === true) {
    sayJson({ file: loaded.file, exists: loaded.exists, settings: Object.fromEntries(configEntries(loaded.config)) })
    return ExitCode.ok
  }
  say(`# ${loaded.file}${loaded.exists ? '' : ' (not written yet)'}`)
  for (const [key, value] of configEntries(loaded.config)) say(`${key} = ${String(value)}`)
  return ExitCode.ok
}
