/**
 * The one order of a session's runs — the instant of `createdAt`, then `runId` — and the newest
 * top-level run by it. The "latest" entry (early exit 2) picks its candidate with it, and the session
 * read model (`@maka/sessions`) lists and shows sessions with it, so a listing's latest run is the
 * run `resume plan` picks.
 */
import { type AgentRun, isChildRun } from '@maka/events'

// -------------------------------------------------------------------------------------
// internals
// -------------------------------------------------------------------------------------

// The instant a timestamp stands for; an unparsable one sorts first (the codecs let none through).
const instantOf = (createdAt: string): number => {
  const ms = Date.parse(createdAt)
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms
}

const byIdThen = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The one order of runs, oldest first: by the instant of `createdAt` (not its text, which differs
 * across UTC offsets and fraction digits), then by `runId`, so the order is total.
 * @category constructors
 */
export const compareRunCreation = (a: AgentRun, b: AgentRun): number =>
  instantOf(a.createdAt) - instantOf(b.createdAt) || byIdThen(a.runId, b.runId)

/**
 * The newest top-level run (a normal run or a continuation, not a child run), by
 * {@link compareRunCreation}.
 * @category constructors
 */
export const latestTopLevelRun = (headers: ReadonlyArray<AgentRun>): AgentRun | undefined =>
  headers
    .filter((run) => !isChildRun(run))
    .reduce<AgentRun | undefined>(
      (latest, run) => (latest === undefined || compareRunCreation(latest, run) < 0 ? run : latest),
      undefined,
    )
