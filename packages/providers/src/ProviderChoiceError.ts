/**
 * The error of the provider choice, in a module of its own so a host can recognise it without
 * loading the choice's readers.
 */

/**
 * A provider flag or a recorded provider that cannot be used, found before anything was written;
 * `message` is one human sentence naming the flag (never a key or the script's content).
 * @category errors
 */
export class ProviderChoiceError extends Error {
  override readonly name = 'ProviderChoiceError'
}

/**
 * Recognises a `ProviderChoiceError` by its name: a host that bundles its commands into separate
 * files holds several copies of the class, so `instanceof` would miss a copy made elsewhere.
 * @category refinements
 */
export const isProviderChoiceError = (error: unknown): error is ProviderChoiceError =>
  error instanceof Error && error.name === 'ProviderChoiceError'
