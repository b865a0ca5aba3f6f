/**
 * @maka/projection — Phase 0: the pure replay projection from a run's committed RuntimeEvent prefix
 * to tool operations and a ResumePlan (`safe_replay` or `blocked`). No I/O, no clock.
 */
export {
  type ToolOperationStatus,
  type ToolOperation,
  ProjectionDiagnosticCode,
  type ProjectionDiagnostic,
  type ProjectionRejectionReason,
  type ResumePlan,
  type ProjectionOptions,
  rejectionReasonOf,
} from './ResumePlan.js'
export {
  type ProjectedPrefix,
  type ProjectorOptions,
  type ResumeProjector,
  makeResumeProjector,
  projectResumePlan,
} from './projectResumePlan.js'
export {
  type JournalCall,
  type JournalDispatch,
  type JournalResponse,
  type SegmentJournal,
  type SegmentJournalFolder,
  makeSegmentJournalFolder,
  foldSegmentJournal,
} from './segmentJournal.js'
export {
  type JournalCorruptionKind,
  type JournalCorruption,
  type OpenOperationStatus,
  type OpenOperation,
  type ChainProjection,
  projectChain,
} from './projectChain.js'
