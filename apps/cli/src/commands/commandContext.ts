/**
 * The context most commands start from: the checked data directory, file stores over it for
 * read-only views, the verbose log, the startup recovery pass and stdout writers.
 */
import { type StorePorts } from '@maka/stores'
import { makeFileStores, nodeStoreFs, syncStoreFs } from '@maka/store-jsonl'
import type { RunObserver, Runtime, StepRetry } from '@maka/executor'
import { type EventNarrator, eventJson, formatSummary } from '../eventSummary.js'
import { toolCallLine, toolOutputPreview } from '../toolActivity.js'
import { type DataDir, checkDataDir, resolveDataDir } from '../hostInput.js'
import type { GlobalFlags } from '../CommandFlags.js'
import { recoveryLine } from '../reportLines.js'
import { chooseStore, describeStore, openChosenStores, sqliteFileExists } from '../storeChoice.js'
import type { RecoveryRefusal } from '@maka/planner'
import { refusalOf, requireRecoveryWritten, unrecoveredLine } from '../writeFailure.js'

/**
 * The store a command works on, checked, with its ports (they touch nothing until used). `dataDir`
 * is the data directory of the JSONL store, or the chosen store's place (a SQLite file).
 * @category models
 */
export interface Workspace {
  readonly dataDir: DataDir
  /**
   * Where this host keeps files that are not store state (a supervised shell command's output and
   * exit status): the JSONL data dir itself, or for a SQL store the data home (`--data-dir`,
   * `$MAKA_HOME`, `~/.maka`).
   */
  readonly filesDir: string
  readonly stores: StorePorts
  readonly note: (message: string) => void
  readonly verbose: boolean
}

/**
 * A lifecycle note of the host itself (identities and codes only) when `--verbose` is on.
 * @category constructors
 */
export const verboseNote = (verbose: boolean) => (message: string) => {
  if (verbose) process.stderr.write(`maka: ${message}\n`)
}

/**
 * How a command's file stores reach the disk: `sync` for a command that runs and exits (each call on
 * the main thread, no thread-pool round trip: decision 68), `async` for one that must stay responsive
 * while it writes (the chat's terminal UI, the desktop host) or that overlaps many sessions' I/O (`recover`).
 * @category models
 */
export type StoreIo = 'sync' | 'async'

/**
 * Resolves and checks the data directory for a read or a write command.
 * @category constructors
 */
export const openDataDir = async (
  globals: GlobalFlags,
  mode: 'read' | 'write',
  io: StoreIo = 'sync',
): Promise<Workspace> => {
  const spec = chooseStore(globals.store)
  const verbose = globals.verbose === true
  const note = verboseNote(verbose)
  if (spec === null || spec.kind === 'jsonl') {
    const dataDir = await checkDataDir(spec === null ? resolveDataDir(globals.dataDir) : spec.dir, mode)
    return {
      dataDir,
      filesDir: dataDir.path,
      stores: makeFileStores(dataDir.path, { fs: io === 'sync' ? syncStoreFs : nodeStoreFs }),
      note,
      verbose,
    }
  }
  note(`store ${describeStore(spec)}`)
  const exists = spec.kind === 'sqlite' ? await sqliteFileExists(spec.file) : true
  const stores = await openChosenStores(spec, { create: mode === 'write' })
  return {
    dataDir: { path: stores.location, exists },
    filesDir: resolveDataDir(globals.dataDir),
    stores,
    note,
    verbose,
  }
}

/**
 * Runs the startup recovery pass over the sessions a command touches (docs/contract.md §4: a command scoped to
 * one session recovers that session only); repairs go to the verbose log (stdout stays the command's own).
 * A repair that a failed write left undone stops the command (`WriteFailedError`, exit 1).
 * @category constructors
 */
export const startupRecovery = async (
  runtime: Runtime,
  note: (message: string) => void,
  sessionIds: ReadonlyArray<string>,
) => {
  const report = await runtime.recover({ sessionIds })
  note(`recovery actions=${report.actions.length}`)
  for (const action of report.actions) note(`recovery ${recoveryLine(action)}`)
  requireRecoveryWritten(report.actions)
  return report
}

/**
 * The recovery pass of a command that plans (`resume plan`, `resume`). As `startupRecovery`, except
 * for a session whose repair the data directory refuses (read-only, not permitted, a link or a file
 * where maka keeps its own): one stderr line says what recovery would have repaired, and the
 * session's refusal is returned for its plan to park on (`recovery_unwritable`). Any other failed
 * write still stops the command.
 * @category constructors
 */
export const recoveryForPlanning = async (
  runtime: Runtime,
  workspace: Pick<Workspace, 'dataDir' | 'note'>,
  sessionIds: ReadonlyArray<string>,
): Promise<ReadonlyMap<string, RecoveryRefusal>> => {
  const report = await runtime.recover({ sessionIds })
  workspace.note(`recovery actions=${report.actions.length}`)
  for (const action of report.actions) workspace.note(`recovery ${recoveryLine(action)}`)
  const refusals = new Map<string, RecoveryRefusal>()
  for (const session of report.unwritable) {
    const refusal = refusalOf(workspace.dataDir.path, session.error)
    refusals.set(session.sessionId, refusal)
    process.stderr.write(`${unrecoveredLine(session, refusal)}\n`)
  }
  requireRecoveryWritten(report.actions, new Set(refusals.keys()))
  return refusals
}

/**
 * Writes one line to stdout.
 * @category constructors
 */
export const say = (line: string = ''): void => {
  process.stdout.write(`${line}\n`)
}

/**
 * Writes one JSON object to stdout.
 * @category constructors
 */
export const sayJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
}

/**
 * Writes one value as one line of JSON (newline-delimited JSON streams).
 * @category constructors
 */
export const sayLine = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`)
}

/**
 * An observer that writes `line` to stderr before the first committed event it sees: the line saying
 * which model and permission mode a run uses appears once the run exists, so a command refused before
 * (a failed write, a live owner, a park) keeps its one stderr line.
 * @category constructors
 */
export const announcedBy = (line: () => string | null, observer: RunObserver): RunObserver => {
  let announced = false
  return {
    ...observer,
    onEvent: (event) => {
      if (!announced) {
        announced = true
        const text = line()
        if (text !== null) process.stderr.write(`${text}\n`)
      }
      observer.onEvent?.(event)
    },
  }
}

/**
 * The observer of `run` and `resume`: each committed event as a line of text, or with `--json` as
 * one object of the newline-delimited stream.
 * @category constructors
 */
export const eventPrinter = (narrator: EventNarrator, json: boolean): RunObserver => ({
  onEvent: (event) => {
    const summary = narrator.summarize(event)
    if (json) sayLine(eventJson(event, summary))
    else say(formatSummary(summary))
  },
  // On stderr in both formats: stdout's JSON stream holds committed events only.
  onRetry: (retry) => process.stderr.write(`${retryLine(retry)}\n`),
})

/**
 * The stderr line of a model step about to be tried again: the failure's sentence (so a 429 reads
 * differently from a 500), the wait and the try.
 * @category constructors
 */
export const retryLine = (retry: StepRetry): string => {
  const seconds = retry.delayMs < 1_000 ? 'under a second' : `${Math.round(retry.delayMs / 1_000)} s`
  return `maka: ${retry.message} Trying again in ${seconds} (try ${retry.attempt} of ${retry.maxAttempts}).`
}

/**
 * What to do after a model failure that outlasted its retries: resume the session later.
 * @category constructors
 */
export const retryLaterSentence = (sessionId: string): string =>
  `Run \`maka resume --session ${sessionId}\` to try again later.`

// The columns of a summary line, so streamed model text starts where a committed one would.
const MODEL_TEXT_PREFIX = `${'model'.padEnd(6)} ${'text'.padEnd(19)} `
const DETAIL_INDENT = ' '.repeat(MODEL_TEXT_PREFIX.length)

/**
 * The text-mode observer of `run` on its stdout: the model's text as it streams (the committed text
 * event then only ends its line), each committed event as a summary line, and under a tool call
 * what it runs (the shell command line, the path) and under its response the first lines of its
 * output. Those detail lines are for the person reading the command's output only: `--json`, the
 * verbose log and the ledger never carry them.
 * @category constructors
 */
export const liveEventPrinter = (
  narrator: EventNarrator,
  write: (text: string) => void = (text) => {
    process.stdout.write(text)
  },
): RunObserver => {
  let streaming = false
  const endStream = () => {
    if (streaming) write('\n')
    streaming = false
  }
  return {
    // A step about to be tried again: the words it streamed end their line, and the notice goes to
    // stderr as `eventPrinter`'s does; the next try streams its answer on a line of its own.
    onRetry: (retry) => {
      endStream()
      process.stderr.write(`${retryLine(retry)}\n`)
    },
    onTextDelta: (_runId, text) => {
      if (text === '') return
      if (!streaming) write(MODEL_TEXT_PREFIX)
      streaming = true
      write(text)
    },
    onEvent: (event) => {
      const summary = narrator.summarize(event)
      if (streaming && summary.kind === 'text' && event.role === 'model') {
        endStream()
        return
      }
      endStream()
      write(`${formatSummary(summary)}\n`)
      const content = event.content
      if (content?.kind === 'function_call') {
        const line = toolCallLine(content.name, content.args)
        if (line !== null) write(`${DETAIL_INDENT}${line}\n`)
      } else if (content?.kind === 'function_response' && summary.denied !== true) {
        for (const line of toolOutputPreview(content.result)) write(`${DETAIL_INDENT}│ ${line}\n`)
      }
    },
  }
}
