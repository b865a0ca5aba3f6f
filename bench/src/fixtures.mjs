/**
 * The data the benchmark runs the CLI on, written straight to disk (never through one-row
 * appends, which would take minutes at a million rows) and cached under `bench/.cache/v<N>/`:
 *
 * - `ledger-<events>/`: one session whose only run is an interrupted turn closed by recovery (a
 *   failed header and terminal, `app_restarted`): a user message, then (model text, function_call,
 *   function_response) steps over the built-in tools, the terminal last. `resume plan` continues it.
 * - `tree-<sessions>/`: `sessions` sessions × 3 runs each, every one consistent (completed runs,
 *   small ledgers), except the target session whose latest run is an interrupted turn like the one
 *   above; `single-<sessions>/` holds a copy of that session alone.
 *
 * Bump CACHE_VERSION whenever what is written changes. Run headers carry the workspace identity
 * (`fs:<dev>:<ino>:<path>`) of the cache's workspace folder; it is checked on every use and the
 * few headers that hold it are rewritten when the folder's inode changed.
 */
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'

const CACHE_VERSION = 1
const here = dirname(fileURLToPath(import.meta.url))
export const cacheRoot = join(here, '..', '.cache', `v${CACHE_VERSION}`)

/** The tools the rows call: all built in, so the tool-catalog gate passes. */
export const TOOLS = Object.freeze(['read_file', 'shell', 'list_dir'])
export const TARGET_SESSION = 'bench-target'
export const TARGET_RUN = 'bench-run'

const CREATED = '2026-01-01T00:00:00.000Z'

/** The folder the benchmark's sessions work in, and its workspace identity as the host inspector computes it. */
export const workspace = () => {
  const dir = join(cacheRoot, 'workspace')
  mkdirSync(dir, { recursive: true })
  const path = realpathSync(dir)
  const stats = statSync(path)
  return { cwd: path, identity: `fs:${stats.dev}:${stats.ino}:${path}` }
}

const header = (ws, ids, fields) => ({
  runId: ids.runId,
  sessionId: ids.sessionId,
  turnId: ids.turnId,
  invocationId: ids.invocationId,
  cwd: ws.cwd,
  providerId: 'scripted',
  modelId: 'scripted-1',
  createdAt: CREATED,
  updatedAt: CREATED,
  workspaceIdentity: ws.identity,
  ...fields,
})

const interruptedHeader = (ws, ids, createdAt = CREATED) =>
  header(ws, ids, {
    status: 'failed',
    failureClass: 'app_restarted',
    createdAt,
    updatedAt: createdAt,
    completedAt: createdAt,
  })

// Rows of one step: the model says something short, calls a tool, the tool answers.
const stepRows = (b, step) => {
  const callId = `call-${step}`
  const tool = TOOLS[step % TOOLS.length]
  const args =
    tool === 'read_file'
      ? { path: `src/module-${step % 97}.ts` }
      : tool === 'shell'
        ? { command: `ls -la dir-${step % 13}` }
        : { path: `src/dir-${step % 7}` }
  const result =
    step % 11 === 0 ? { ok: false, error: 'not found' } : { ok: true, lines: step % 50, text: `line ${step}` }
  return [
    b.modelText(`Step ${step}: checking with ${tool}.`),
    b.functionCall(callId, tool, args),
    b.functionResponse(callId, tool, result, step % 11 === 0 ? true : undefined),
  ]
}

// Writes an interrupted turn's ledger of exactly `events` rows: user, fillers, steps, terminal.
const writeInterruptedLedger = (path, ids, events) => {
  const fd = openSync(path, 'w')
  const b = makeLedgerBuilderUnsafe(ids)
  let chunk = []
  let chars = 0
  const flush = () => {
    if (chunk.length > 0) writeSync(fd, chunk.join(''))
    chunk = []
    chars = 0
  }
  const push = (row) => {
    const line = `${JSON.stringify(row)}\n`
    chunk.push(line)
    chars += line.length
    if (chars > 4 << 20) flush()
  }
  try {
    push(b.userText('Refactor the parser module and run the tests.'))
    const middle = events - 2
    const steps = Math.floor(middle / 3)
    for (let i = 0; i < middle - steps * 3; i += 1) push(b.thinking(`Planning the work, part ${i + 1}.`))
    for (let step = 1; step <= steps; step += 1) for (const row of stepRows(b, step)) push(row)
    push(b.terminal())
    flush()
  } finally {
    closeSync(fd)
  }
}

const writeJson = (path, value) => writeFileSync(path, `${JSON.stringify(value)}\n`)

const writeSession = (dataDir, ws, sessionId, createdAt) => {
  const dir = join(dataDir, 'sessions', sessionId)
  mkdirSync(join(dir, 'runs'), { recursive: true })
  writeJson(join(dir, 'session.json'), { sessionId, cwd: ws.cwd, createdAt, title: 'bench' })
  return dir
}

// Builds into a temp folder and renames it into place, so an interrupted build is never reused.
const cached = (name, build) => {
  const target = join(cacheRoot, name)
  if (existsSync(join(target, '.complete'))) return target
  rmSync(target, { recursive: true, force: true })
  const temp = `${target}.tmp-${process.pid}`
  rmSync(temp, { recursive: true, force: true })
  mkdirSync(temp, { recursive: true })
  build(temp)
  writeFileSync(join(temp, '.complete'), '')
  renameSync(temp, target)
  return target
}

const targetIds = (sessionId, runId) => ({
  sessionId,
  runId,
  invocationId: `${runId}-inv`,
  turnId: `${runId}-turn`,
})

/** A data dir with one interrupted run of `events` rows; returns its dir, ledger path and bytes. */
export const ledgerFixture = (events) => {
  const ws = workspace()
  const dataDir = cached(`ledger-${events}`, (dir) => {
    const ids = targetIds(TARGET_SESSION, TARGET_RUN)
    const sessionDir = writeSession(dir, ws, TARGET_SESSION, CREATED)
    const runDir = join(sessionDir, 'runs', TARGET_RUN)
    mkdirSync(runDir)
    writeInterruptedLedger(join(runDir, 'runtime-events.jsonl'), ids, events)
    writeJson(join(runDir, 'run.json'), interruptedHeader(ws, ids))
  })
  refreshIdentity(dataDir, ws, [[TARGET_SESSION, TARGET_RUN]])
  const ledger = join(dataDir, 'sessions', TARGET_SESSION, 'runs', TARGET_RUN, 'runtime-events.jsonl')
  return { dataDir, ledger, bytes: statSync(ledger).size, sessionId: TARGET_SESSION }
}

// A consistent completed run: user, model answer, completed terminal.
const writeCompletedRun = (sessionDir, ws, ids, createdAt) => {
  const runDir = join(sessionDir, 'runs', ids.runId)
  mkdirSync(runDir)
  const b = makeLedgerBuilderUnsafe(ids)
  const rows = [b.userText('List the files.'), b.modelText('Done: three files.'), b.terminal({ status: 'completed' })]
  writeFileSync(join(runDir, 'runtime-events.jsonl'), rows.map((row) => `${JSON.stringify(row)}\n`).join(''))
  writeJson(
    join(runDir, 'run.json'),
    header(ws, ids, { status: 'completed', createdAt, updatedAt: createdAt, completedAt: createdAt }),
  )
}

const writeTargetSession = (dataDir, ws) => {
  const dir = writeSession(dataDir, ws, TARGET_SESSION, '2026-01-01T00:00:00.000Z')
  writeCompletedRun(dir, ws, targetIds(TARGET_SESSION, 'bench-run-a'), '2026-01-01T00:00:01.000Z')
  writeCompletedRun(dir, ws, targetIds(TARGET_SESSION, 'bench-run-b'), '2026-01-01T00:00:02.000Z')
  const ids = targetIds(TARGET_SESSION, TARGET_RUN)
  mkdirSync(join(dir, 'runs', TARGET_RUN))
  writeInterruptedLedger(join(dir, 'runs', TARGET_RUN, 'runtime-events.jsonl'), ids, 20)
  writeJson(join(dir, 'runs', TARGET_RUN, 'run.json'), interruptedHeader(ws, ids, '2026-01-01T00:00:03.000Z'))
}

/**
 * `sessions` sessions × 3 runs (the target session among them), and a data dir holding the target
 * session alone.
 */
export const treeFixture = (sessions) => {
  const ws = workspace()
  const tree = cached(`tree-${sessions}`, (dir) => {
    for (let i = 0; i < sessions - 1; i += 1) {
      const sessionId = `bench-s${String(i).padStart(6, '0')}`
      const at = new Date(Date.parse(CREATED) - (i + 1) * 60_000).toISOString()
      const sessionDir = writeSession(dir, ws, sessionId, at)
      for (let r = 0; r < 3; r += 1) writeCompletedRun(sessionDir, ws, targetIds(sessionId, `run-${r}`), at)
    }
    writeTargetSession(dir, ws)
  })
  const single = cached(`single-${sessions}`, (dir) => {
    mkdirSync(join(dir, 'sessions'))
    cpSync(join(tree, 'sessions', TARGET_SESSION), join(dir, 'sessions', TARGET_SESSION), { recursive: true })
  })
  refreshIdentity(tree, ws, [[TARGET_SESSION, TARGET_RUN]])
  refreshIdentity(single, ws, [[TARGET_SESSION, TARGET_RUN]])
  return { tree, single, sessionId: TARGET_SESSION, sessions }
}

// Only the interrupted run is planned, so only its header needs the identity of today's folder.
const refreshIdentity = (dataDir, ws, runs) => {
  for (const [sessionId, runId] of runs) {
    const path = join(dataDir, 'sessions', sessionId, 'runs', runId, 'run.json')
    const value = JSON.parse(readFileSync(path, 'utf8'))
    if (value.workspaceIdentity === ws.identity && value.cwd === ws.cwd) continue
    writeJson(path, { ...value, workspaceIdentity: ws.identity, cwd: ws.cwd })
    const sessionPath = join(dataDir, 'sessions', sessionId, 'session.json')
    writeJson(sessionPath, { ...JSON.parse(readFileSync(sessionPath, 'utf8')), cwd: ws.cwd })
  }
}

/**
 * Removes what a `resume` left in a ledger fixture (its continuation run and claim), so the next
 * repetition resumes the same boundary again.
 */
export const undoResume = (dataDir, sessionId, keepRuns) => {
  const sessionDir = join(dataDir, 'sessions', sessionId)
  rmSync(join(sessionDir, 'claims'), { recursive: true, force: true })
  rmSync(join(sessionDir, 'owner.lock'), { force: true })
  for (const runId of listDir(join(sessionDir, 'runs'))) {
    if (!keepRuns.includes(runId)) rmSync(join(sessionDir, 'runs', runId), { recursive: true, force: true })
  }
}

const listDir = (dir) => {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
