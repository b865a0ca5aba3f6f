/**
 * The error of the provider choice, in a module of its own so a host can name it without loading
 * the choice's readers. It is a value: the readers return it in an `Either`/`TaskEither`, never throw it.
 */

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A provider flag or a recorded provider that cannot be used, found before anything was written;
 * `message` is one human sentence naming the flag (never a key or the script's content).
 * @category errors
 */
export interface ProviderChoiceError {
  readonly _tag: 'ProviderChoiceError'
  readonly message: string
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds a {@link ProviderChoiceError}.
 * @category constructors
 */
export const providerChoiceError = (message: string): ProviderChoiceError => ({ _tag: 'ProviderChoiceError', message })
