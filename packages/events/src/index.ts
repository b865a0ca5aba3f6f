/**
 * @maka/events — the shared vocabulary of maka-resume: RuntimeEvent and AgentRun codecs, the other
 * on-disk records, branded ids, lifecycle-row constructors and the stable code tables (park
 * reasons, execution rejections, failure classes, failpoints). Pure: no I/O, no clock.
 */
export {
  ID_PATTERN,
  isSafeId,
  SessionId,
  RunId,
  ShellRunId,
  NonEmptyString,
  NonNegativeInt,
  FiniteNumber,
  IsoTimestamp,
  AbsolutePath,
  type SessionIdBrand,
  type RunIdBrand,
  type ShellRunIdBrand,
  type NonEmptyStringBrand,
  type NonNegativeIntBrand,
  type FiniteNumberBrand,
  type IsoTimestampBrand,
  type AbsolutePathBrand,
  makeSessionIdUnsafe,
  makeRunIdUnsafe,
  makeShellRunIdUnsafe,
  makeNonEmptyStringUnsafe,
  makeNonNegativeIntUnsafe,
  makeFiniteNumberUnsafe,
  makeIsoTimestampUnsafe,
  makeAbsolutePathUnsafe,
} from './ids.js'
export { strictStruct, discriminatedByKind, describeDecodeErrors, type StrictStructType } from './strictStruct.js'
export {
  TextContent,
  ThinkingContent,
  FunctionCallContent,
  FunctionResponseContent,
  ErrorContent,
  RuntimeEventContent,
  PermissionRequest,
  PermissionDecision,
  TokenUsage,
  RuntimeEventActions,
  RuntimeEventRefs,
  EventRole,
  EventAuthor,
  EventStatus,
  RuntimeEvent,
  type TerminalEventStatus,
  isTerminalEventStatus,
  isTerminalEvent,
  isContinuationStartEvent,
  isModelVisible,
  isFunctionCallEvent,
  isFunctionResponseEvent,
  journalPlacementProblem,
} from './RuntimeEvent.js'
export {
  RunStatus,
  type TerminalRunStatus,
  ContinuationSource,
  AgentRun,
  PermissionMode,
  isTerminalRunStatus,
  isChildRun,
  isContinuationRun,
  runStatusFromTerminalStatus,
} from './AgentRun.js'
export {
  SessionRecord,
  ShellRunStatus,
  ProcessIdentity,
  ShellRun,
  ShellRunExit,
  OwnerLock,
  ContinuationClaim,
} from './records.js'
export {
  type RunIdentity,
  type RowStamp,
  type TerminalOutcome,
  makeInitialUserEvent,
  type ContinuationJournal,
  makeContinuationStartEvent,
  makeTerminalEvent,
} from './lifecycleEvents.js'
export {
  ParkReasonSentences,
  ParkReasonNextSteps,
  type ParkReason,
  PARK_REASONS,
  isParkReason,
  describeParkReason,
  nextStepForPark,
} from './ParkReason.js'
export {
  OPERATOR_VERDICTS,
  type OperatorVerdict,
  OperatorVerdictMeanings,
  RESOLVABLE_PARK_REASONS,
  isOperatorVerdict,
  isResolvableParkReason,
} from './OperatorVerdict.js'
export {
  ExecutionRejectionSentences,
  type ExecutionRejection,
  isExecutionRejection,
  FailureClass,
} from './ExecutionRejection.js'
export { CodeSentences, type SentencedCode, isSentencedCode, describeCode } from './CodeSentences.js'
export {
  CommittedPrefix,
  type FailpointDecision,
  type Failpoint,
  FAILPOINTS,
  CommittedPrefixT1,
  type FailpointPlanT1,
  type FailpointDecisionT1,
  type FailpointT1,
  FAILPOINTS_T1,
} from './Failpoint.js'
export { decodeWith, decodeGuardFirst, decodeRuntimeEvent, decodeAgentRun } from './decode.js'
export { type StringIndex, makeStringIndex } from './stringIndex.js'
export {
  TOOL_BOUNDARY_PROTOCOL,
  RecoveryMode,
  SettlementOrigin,
  SettlementAction,
  AdjudicationVerdict,
  AdjudicationActor,
  Attempt,
  Sha256Digest,
  ReconcileBasis,
  RuntimeProtocol,
  ToolDispatch,
  ToolOutcome,
  SettlementEntry,
  SettlementPlan,
  MAX_SETTLEMENTS,
  operationIdOf,
  argsDigest,
  prefixDigestOf,
  argsDigestWith,
  type AttemptBrand,
  type Sha256DigestBrand,
  type ReconcileBasisBrand,
  type ToolDispatchBrand,
  type ToolOutcomeBrand,
  type SettlementPlanBrand,
} from './ToolJournal.js'
export {
  PROTOCOL_MARKER,
  withProtocolMarker,
  isProtocolMarked,
  carriesJournalKey,
  type DispatchFields,
  type OutcomeFields,
  makeDispatchEvent,
  makeToolOutcome,
} from './journalRows.js'
export {
  type RecordedToolSource,
  TOOL_SOURCE_KEY,
  toolSourceDelta,
  recordedToolSourceOf,
} from './recordedToolSource.js'
