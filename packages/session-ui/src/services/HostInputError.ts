/**
 * Bad input from the renderer (a malformed id, an unknown session, a missing prompt): refused
 * with a stable code and one sentence before anything is read or written.
 */

/**
 * A refused request; `code` is stable, `message` a sentence for the person.
 * @category errors
 */
export class HostInputError extends Error {
  override readonly name = 'HostInputError'
  constructor(
    readonly code: 'bad_input' | 'unknown_session' | 'unknown_channel' | 'sender_refused',
    message: string,
  ) {
    super(message)
  }
}
