/**
 * @maka/chaos — the proof behind `maka chaos`: a seeded driver that SIGKILLs real child processes
 * (turns, resumers racing on one boundary, recovery, storms of both over one dead owner) at crash
 * points and random moments, and an invariant checker that judges the files they leave behind with
 * no code of the product.
 */
export {
  type ChaosHost,
  type ChaosOptions,
  type ChaosSummary,
  type ChildSpec,
  type CrashAt,
  type IterationReport,
  type SeededViolation,
  type StormOptions,
  type StormReport,
  type StormRoles,
  CRASH_LINE_PREFIX,
  READY_LINE,
  MAX_STORM_SIZE,
  MIN_STORM_SIZE,
  runChaos,
} from './runChaos.js'
export { type InvariantInput, checkInvariants } from './checkInvariants.js'
export { type JournalInvariantInput, checkJournal } from './checkJournal.js'
export {
  type JournalChaosOptions,
  type JournalChaosSummary,
  type JournalIterationReport,
  type JournalOutcome,
  type JournalStep,
  journalScriptOf,
  runJournalChaos,
} from './journalChaos.js'
export {
  type ClaimFile,
  type DataDirSnapshot,
  type EffectCounts,
  type RunFiles,
  SHELL_EFFECTS_FILE,
  WRITE_EFFECTS_DIR,
  emptySnapshot,
  readDataDir,
  readEffects,
} from './DataDirSnapshot.js'
export {
  type OpenSqlite,
  type SqliteDatabaseLike,
  type SqliteStatementLike,
  dropScratchDatabase,
  readPostgresSnapshot,
  readSqliteSnapshot,
  recreateScratchDatabase,
} from './sqlStores.js'
export { type EffectStep, effectToken, remainingSteps, scriptOf, tokenOfCall } from './effectScript.js'
export { InvariantCode, type Violation } from './Violation.js'
export { type Rng, iterationSeeds, makeRng, nextSeed, parseSeed } from './Rng.js'
