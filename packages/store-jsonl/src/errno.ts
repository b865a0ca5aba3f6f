/**
 * The errno name of a thrown Node.js error: how a host that calls the filesystem beside the store
 * (a socket, a config file) names what failed in the words the store uses.
 */

/**
 * The errno name of a thrown Node.js error, if it has one.
 * @category guards
 */
export const errnoCode = (cause: unknown): string | undefined =>
  typeof cause === 'object' && cause !== null && typeof (cause as { code?: unknown }).code === 'string'
    ? (cause as { code: string }).code
    : undefined
