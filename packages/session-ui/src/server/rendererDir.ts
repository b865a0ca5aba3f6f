/**
 * Where the built renderer is. Resolved through the package's own name so it holds both here and
 * when a host bundles this module (the CLI's `maka ui` chunk).
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/**
 * The folder of the built renderer (`index.html` and its assets).
 * @category constructors
 */
export const rendererDir = (): string =>
  join(dirname(createRequire(import.meta.url).resolve('@maka/session-ui/package.json')), 'dist', 'renderer')
