/**
 * The decode edge: unknown JSON in, a typed value or one human sentence out. Stores call these on
 * every row they read; nothing undecoded crosses into the core.
 */
import type * as E from 'fp-ts/lib/Either.js'
import type * as t from 'io-ts'
import { AgentRun } from './AgentRun.js'
import { RuntimeEvent } from './RuntimeEvent.js'
import { describeDecodeErrors } from './strictStruct.js'

/**
 * Decodes a value with a codec; failures become one sentence naming the failing path.
 * @category codecs
 */
export const decodeWith =
  <A>(codec: t.Decoder<unknown, A>) =>
  (u: unknown): E.Either<string, A> => {
    const result = codec.decode(u)
    return result._tag === 'Right' ? result : { _tag: 'Left', left: describeDecodeErrors(result.left) }
  }

/**
 * {@link decodeWith} for a codec that gives back the value it accepts unchanged (a strict struct of
 * non-transforming codecs, a brand of one): its guard answers for a value it takes, and the decoder
 * runs only for a value it refuses, for its sentence. What is accepted and each refusal's sentence
 * are the decoder's; in a short process, io-ts' decoder (a context per key, an `Either` per value)
 * is the dear way to say yes.
 * @category codecs
 */
export const decodeGuardFirst = <A, O>(codec: t.Type<A, O, unknown>): ((u: unknown) => E.Either<string, A>) => {
  const decode = decodeWith(codec)
  return (u) => (codec.is(u) ? { _tag: 'Right', right: u } : decode(u))
}

/**
 * Decodes one parsed ledger row.
 * @category codecs
 */
export const decodeRuntimeEvent: (u: unknown) => E.Either<string, RuntimeEvent> = decodeWith(RuntimeEvent)

/**
 * Decodes a parsed `run.json`. `AgentRun` is a strict struct of non-transforming codecs, so its
 * guard answers first ({@link decodeGuardFirst}): a header is checked on every write and read.
 * @category codecs
 */
export const decodeAgentRun: (u: unknown) => E.Either<string, AgentRun> = decodeGuardFirst(AgentRun)
