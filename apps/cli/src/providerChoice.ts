/**
 * The provider flags as the CLI reads them. The rules (which flags pick which model, and how a
 * resume keeps the model its source run recorded) live in `@maka/providers`, shared with the
 * desktop host, and refuse with a `ProviderChoiceError` value; here that refusal is bad input
 * (exit 2, see program.ts), like every other `require…` of the CLI's input.
 */
import * as E from 'fp-ts/lib/Either.js'
import { type ProviderChoice, type ProviderFlags, checkProviderFlags, readProviderChoice } from '@maka/providers'
import { BadInputError } from './ExitCode.js'

export {
  type ProviderFlags,
  type ProviderChoice,
  type ProviderChoiceError,
  type ScriptDefaults,
  checkBaseUrl,
  readProviderChoice,
  providerForRuns,
  checkProviderFlags,
  providerFlagsGiven,
  providerChoiceForResume,
  continuationProviderResolver,
} from '@maka/providers'

/**
 * The provider the flags choose; a refusal is bad input with the choice's own sentence.
 * @category constructors
 */
export const requireProviderChoice = async (flags: ProviderFlags): Promise<ProviderChoice> => {
  const choice = await readProviderChoice(flags)()
  if (E.isLeft(choice)) throw new BadInputError(choice.left.message)
  return choice.right
}

/**
 * Checks the provider flags that need no file or key before anything is written; a refusal is bad input.
 * @category constructors
 */
export const requireProviderFlags = (flags: ProviderFlags): void => {
  const checked = checkProviderFlags(flags)
  if (E.isLeft(checked)) throw new BadInputError(checked.left.message)
}
