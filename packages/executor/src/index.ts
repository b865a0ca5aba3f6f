/**
 * @maka/executor — the run lifecycle (normal turns), safe continuation execution (guard,
 * revalidation, durable claim, continuation-start, provider replay), session ownership and
 * startup recovery. The deciders (`decide*`) and revalidation are pure and return writes as data;
 * the runtime is the shell that performs what they decide, in the contract's order.
 */
export {
  type PermissionMode,
  type CrashPoint,
  type LifecycleEvent,
  type LifecycleSink,
  type RunObserver,
  type StepRetry,
  type PermissionQuestion,
  type RuntimeDeps,
  type ProviderRun,
  type ProviderUnavailable,
  type ResolvedProvider,
  type ContinuationProviderResolver,
  type ContinuationRejectionCode,
} from './RuntimeDeps.js'
export {
  type RunRecoveryDecision,
  type RecoveryStamp,
  decideRunRecovery,
  abandonedTargetHeader,
  abandonedTerminal,
  type AbandonedClaimRepair,
  decideAbandonedClaim,
} from './decideRecovery.js'
export {
  type ProviderIdentity,
  type TurnStartInput,
  type TurnStart,
  decideTurnStart,
  providerIdentityOf,
} from './decideTurnStart.js'
export {
  type ApprovedContinuation,
  type ContinuationInput,
  type ContinuationStart,
  decideContinuation,
} from './decideContinuation.js'
export { type RunTerminal, decideTerminal } from './decideTerminal.js'
export {
  type ResolveConditions,
  type UncheckedResolveRequest,
  type ResolveRefusal,
  type ResolveJudgement,
  type ChainCall,
  type AdjudicationInput,
  type Adjudication,
  MAX_RESOLVE_OUTPUT_BYTES,
  AdjudicationResults,
  checkResolveRequest,
  earlyExitRefusal,
  selectResolveOperation,
  decideAdjudication,
  isAdjudicationStart,
} from './decideResolve.js'
export { type RevalidationObservation, revalidate, jsonEqual } from './revalidate.js'
export {
  type TurnRequest,
  type TurnResult,
  type ContinuationResult,
  type ResumeRequest,
  type ResumeObserver,
  type ResolveVerdict,
  type ResolveActor,
  type ResolveTarget,
  type ResolveRequest,
  type ResolveResult,
  type WaitingOperation,
  type ReplayFailure,
  type PlanOutline,
  type Runtime,
} from './Runtime.js'
export { makeRuntime } from './makeRuntime.js'
export { awaitsExplicitResume } from './resolveCall.js'
export { plannerStorePort, plannerHostPort, observeHostFacts, sessionStatePort } from './portAdapters.js'
export { type FileRuntimeOptions, type FileRuntime, makeFileRuntime } from './makeFileRuntime.js'
export {
  type RecoveryAction,
  type RecoveryReport,
  type StartupRecoveryDeps,
  makeStartupRecovery,
} from './startupRecovery.js'
export { type Ownership, makeOwnership } from './ownership.js'
