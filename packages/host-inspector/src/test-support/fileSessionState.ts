/**
 * A file-backed SessionStatePort for tests: it reads real JSON files laid out as `ledger-format.md`
 * describes, so the inspector is exercised against the same shapes `stores` will hand it without
 * depending on `stores` while that package is being written. Writers build the files.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { AgentRun, decodeAgentRun, decodeWith, RunId, ShellRun } from '@maka/events'
import { type RunListing, ioFailed, unreadable } from '@maka/stores'
import { errnoCode } from '@maka/stores'
import type { SessionStatePort, ShellRunEntry } from '../SessionStatePort.js'

const decodeShellRun = decodeWith(ShellRun)

const listDir = async (dir: string): Promise<ReadonlyArray<string>> => {
  try {
    return (await readdir(dir)).sort()
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return []
    throw error
  }
}

const readJson = async (file: string): Promise<unknown> => JSON.parse(await readFile(file, 'utf8')) as unknown

/**
 * A temp data directory with writers for session files and a port that reads them back.
 * @category unsafe
 */
export interface DataDirFixture {
  readonly dataDir: string
  readonly port: SessionStatePort
  writeShellRun(record: ShellRun): Promise<void>
  writeRunHeader(header: AgentRun): Promise<void>
  writeRawShellRun(sessionId: string, shellRunId: string, text: string): Promise<void>
  writeRawRunHeader(sessionId: string, runId: string, text: string): Promise<void>
  cleanup(): Promise<void>
}

/**
 * Creates a fresh temp data directory and a file-backed port over it.
 * @category unsafe
 */
export const makeDataDirFixtureUnsafe = async (): Promise<DataDirFixture> => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'maka-host-inspector-data-'))
  const sessionDir = (sessionId: string) => path.join(dataDir, 'sessions', sessionId)
  const writeText = async (file: string, text: string) => {
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, text)
  }
  const shellRunFile = (sessionId: string, shellRunId: string) =>
    path.join(sessionDir(sessionId), 'shell-runs', `${shellRunId}.json`)
  const runHeaderFile = (sessionId: string, runId: string) =>
    path.join(sessionDir(sessionId), 'runs', runId, 'run.json')

  const port: SessionStatePort = {
    listShellRuns: (sessionId) =>
      TE.tryCatch(
        async () => {
          const dir = path.join(sessionDir(sessionId), 'shell-runs')
          const names = (await listDir(dir)).filter((name) => name.endsWith('.json'))
          return Promise.all(
            names.map(async (name): Promise<ShellRunEntry> => {
              const shellRunId = name.slice(0, -'.json'.length)
              try {
                const decoded = decodeShellRun(await readJson(path.join(dir, name)))
                return decoded._tag === 'Right' ? decoded.right : { shellRunId, error: decoded.left }
              } catch (error) {
                return { shellRunId, error }
              }
            }),
          )
        },
        (cause) => ioFailed('readdir', path.join(sessionDir(sessionId), 'shell-runs'), cause),
      ),
    listRuns: (sessionId) =>
      TE.tryCatch(
        async () => {
          const dir = path.join(sessionDir(sessionId), 'runs')
          return Promise.all(
            (await listDir(dir)).filter(RunId.is).map(async (runId): Promise<RunListing> => {
              const file = path.join(dir, runId, 'run.json')
              try {
                const decoded = decodeAgentRun(await readJson(file))
                return decoded._tag === 'Right'
                  ? { runId, header: decoded.right }
                  : { runId, error: unreadable(file, decoded.left) }
              } catch (error) {
                return { runId, error: unreadable(file, String(error)) }
              }
            }),
          )
        },
        (cause) => ioFailed('readdir', path.join(sessionDir(sessionId), 'runs'), cause),
      ),
  }

  return {
    dataDir,
    port,
    writeShellRun: (record) =>
      writeText(shellRunFile(record.sessionId, record.shellRunId), JSON.stringify(ShellRun.encode(record))),
    writeRunHeader: (header) =>
      writeText(runHeaderFile(header.sessionId, header.runId), JSON.stringify(AgentRun.encode(header))),
    writeRawShellRun: (sessionId, shellRunId, text) => writeText(shellRunFile(sessionId, shellRunId), text),
    writeRawRunHeader: (sessionId, runId, text) => writeText(runHeaderFile(sessionId, runId), text),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  }
}
