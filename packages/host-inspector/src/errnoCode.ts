/**
 * The errno name of a thrown Node.js error. The inspector reads /proc and runs `ps` itself, so it
 * names what failed on its own, without the file store adapter.
 */

/**
 * The errno name of a thrown Node.js error, if it has one.
 * @category guards
 */
export const errnoCode = (cause: unknown): string | undefined =>
  typeof cause === 'object' && cause !== null && typeof (cause as { code?: unknown }).code === 'string'
    ? (cause as { code: string }).code
    : undefined
