/**
 * Terminal styling: ANSI colour only when stdout is a TTY (and NO_COLOR is unset), plain text when
 * piped, so scripts and tests read the same words a person sees.
 */

/**
 * The few styles the CLI uses.
 * @category models
 */
export interface Style {
  readonly enabled: boolean
  readonly bold: (s: string) => string
  readonly dim: (s: string) => string
  readonly green: (s: string) => string
  readonly red: (s: string) => string
  readonly yellow: (s: string) => string
  readonly cyan: (s: string) => string
}

const wrap = (enabled: boolean, open: number, close: number) => (s: string) =>
  enabled ? `\u001b[${open}m${s}\u001b[${close}m` : s

/**
 * A style that colours only when asked to.
 * @category constructors
 */
export const makeStyle = (enabled: boolean): Style => ({
  enabled,
  bold: wrap(enabled, 1, 22),
  dim: wrap(enabled, 2, 22),
  green: wrap(enabled, 32, 39),
  red: wrap(enabled, 31, 39),
  yellow: wrap(enabled, 33, 39),
  cyan: wrap(enabled, 36, 39),
})

/**
 * Colour for stdout when it is a terminal and the user did not opt out.
 * @category constructors
 */
export const styleForStdout = (env: NodeJS.ProcessEnv = process.env): Style =>
  makeStyle(process.stdout.isTTY === true && (env['NO_COLOR'] === undefined || env['NO_COLOR'] === ''))
