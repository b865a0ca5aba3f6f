/**
 * The one cwd comparison of the contract ("source cwd equals current cwd after normalisation"):
 * the planner's gate 3, the executor's revalidation and the cwd a new session records all use it,
 * so a plan and its execution can never disagree about whether the workspace moved.
 */

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * A cwd without trailing separators; the root stays `/`. Nothing else changes: the host has
 * already resolved links (realpath), and a recorded cwd is compared as it was recorded.
 * @category constructors
 */
export const normalizeCwd = (cwd: string): string => {
  const trimmed = cwd.replace(/\/+$/, '')
  return trimmed === '' && cwd.startsWith('/') ? '/' : trimmed
}

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * True when two cwds are the same after {@link normalizeCwd}.
 * @category guards
 */
export const sameCwd = (a: string, b: string): boolean => normalizeCwd(a) === normalizeCwd(b)
