/**
 * The code paths a command took, by name, for its code cache (`loadCommandBundle`): a cache holds
 * only the functions its first run compiled, so a later run down another path (a protocol run after
 * a first run without the tool journal) would compile that path's code again on every start, for
 * good. A command notes the paths it takes; at exit the loader rewrites a cache that lacks one.
 *
 * The program and each command bundle carry their own copy of this module (each bundle is
 * self-contained), so the names live on one registry shared through the global object.
 */

const REGISTRY = Symbol.for('maka.codePaths')

type WithRegistry = typeof globalThis & { [REGISTRY]?: Set<string> }

/**
 * Notes that this process took the code path `name`.
 * @category constructors
 */
export const noteCodePath = (name: string): void => {
  const global = globalThis as WithRegistry
  ;(global[REGISTRY] ??= new Set<string>()).add(name)
}

/**
 * The code paths this process noted so far.
 * @category constructors
 */
export const notedCodePaths = (): ReadonlySet<string> => (globalThis as WithRegistry)[REGISTRY] ?? new Set<string>()
