/**
 * @maka/providers — the model seam of maka-resume: the provider port, the materializer that turns
 * committed ledger rows into provider history, a deterministic scripted model and an
 * OpenAI-compatible streaming client. The executor speaks only `ModelProvider`, so a continuation
 * runs through exactly the same loop whichever model is behind it.
 */
export {
  type ProviderMessage,
  type ToolSpec,
  type ProviderRequest,
  type ProviderChunk,
  type ModelProvider,
  type ProviderErrorCode,
  type ProviderFailure,
  type RetryPolicy,
  providerFailure,
  failureClassOfProviderFailure,
} from './ModelProvider.js'
export {
  type RetryDecision,
  DEFAULT_RETRY_POLICY,
  NO_RETRY,
  isTransientFailure,
  decideRetry,
  parseRetryAfter,
  readRetryPolicy,
} from './RetryPolicy.js'
export { materializeHistory } from './materializeHistory.js'
export {
  TextStep,
  ToolCallStep,
  DelayStep,
  ErrorStep,
  ScriptStep,
  decodeScript,
  parseScript,
  DEMO_SCRIPT,
} from './ScriptStep.js'
export { type ScriptedProviderOptions, makeScriptedProvider } from './scriptedProvider.js'
export {
  type OpenAICompatibleProviderOptions,
  DEFAULT_PROVIDER_TIMEOUT_MS,
  makeOpenAICompatibleProvider,
} from './openAICompatibleProvider.js'
export {
  type ProviderFlags,
  type ProviderChoice,
  type ScriptDefaults,
  checkBaseUrl,
  readProviderChoice,
  providerForRuns,
  checkProviderFlags,
  providerFlagsGiven,
  providerChoiceForResume,
  continuationProviderResolver,
} from './providerChoice.js'
export type { ProviderChoiceError } from './ProviderChoiceError.js'
