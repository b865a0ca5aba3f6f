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
