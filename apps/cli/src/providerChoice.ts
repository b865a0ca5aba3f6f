/**
 * The provider flags as the CLI reads them. The rules (which flags pick which model, and how a
 * resume keeps the model its source run recorded) live in `@maka/providers`, shared with the
 * desktop host; a `ProviderChoiceError` is bad input here (exit 2, see program.ts).
 */
export {
  type ProviderFlags,
  type ProviderChoice,
  type ScriptDefaults,
  ProviderChoiceError,
  isProviderChoiceError,
  checkBaseUrl,
  readProviderChoice,
  providerForRuns,
  checkProviderFlags,
  providerFlagsGiven,
  providerChoiceForResume,
  continuationProviderResolver,
} from '@maka/providers'
