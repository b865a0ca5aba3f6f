/**
 * Writes a deterministic, realistic ledger for the benchmarks: one run of a failed turn whose
 * ledger is a user message, then repeated (model text, function_call, function_response) steps with
 * small args and results, and a failed terminal. Rows come from the real fixture builder, so they
 * have exactly the shape the agent writes; the JSONL is written directly (the store's one-row
 * appends would take minutes at a million rows) and the headers through the store, so the store
 * reads it as one of its own runs.
 */
import { openSync, writeSync, closeSync, statSync } from 'node:fs'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { makeFileStores, ledgerPath } from '@maka/stores'

export const IDENTITY = Object.freeze({
  sessionId: 'bench-session',
  invocationId: 'bench-invocation',
  runId: 'bench-run',
  turnId: 'bench-turn',
})
export const CWD = '/work/bench-project'
export const WORKSPACE = 'fs:64769:4242:/work/bench-project'
export const TOOLS = Object.freeze(['read_file', 'shell', 'grep'])

/** The source header: a failed turn, as startup recovery leaves it. */
export const sourceHeader = () => ({
  runId: IDENTITY.runId,
  sessionId: IDENTITY.sessionId,
  turnId: IDENTITY.turnId,
  invocationId: IDENTITY.invocationId,
  status: 'failed',
  cwd: CWD,
  providerId: 'scripted',
  modelId: 'scripted-1',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T01:00:00.000Z',
  workspaceIdentity: WORKSPACE,
  failureClass: 'app_restarted',
})

/** Host facts under which the ledger is safe to continue (every gate passes). */
export const hostFacts = () => ({
  currentCwd: CWD,
  currentWorkspaceIdentity: WORKSPACE,
  backgroundOperationsSettled: true,
  unsettledOperations: [],
  availableToolNames: [...TOOLS],
})

// Rows for one step: the model says something short, calls a tool, the tool answers.
const stepRows = (b, step) => {
  const callId = `call-${step}`
  const tool = TOOLS[step % TOOLS.length]
  const args =
    tool === 'read_file'
      ? { path: `src/module-${step % 97}.ts` }
      : tool === 'shell'
        ? { command: `ls -la dir-${step % 13}` }
        : { pattern: `TODO-${step % 7}`, path: 'src' }
  const result =
    step % 11 === 0 ? { ok: false, error: 'not found' } : { ok: true, lines: step % 50, text: `line ${step}` }
  return [
    b.modelText(`Step ${step}: checking with ${tool}.`),
    b.functionCall(callId, tool, args),
    b.functionResponse(callId, tool, result, step % 11 === 0 ? true : undefined),
  ]
}

/**
 * Creates the session, the run header and a ledger of exactly `events` rows under `dataDir`.
 * Returns the ledger's path and size in bytes.
 */
export const writeBenchLedger = async (dataDir, events) => {
  if (!Number.isSafeInteger(events) || events < 5) throw new Error('--events must be an integer ≥ 5')
  const stores = makeFileStores(dataDir)
  const session = await stores.sessions.create({
    sessionId: IDENTITY.sessionId,
    cwd: CWD,
    createdAt: '2026-01-01T00:00:00.000Z',
  })()
  if (session._tag === 'Left') throw new Error(`session create failed: ${session.left._tag}`)
  const run = await stores.runs.create(sourceHeader())()
  if (run._tag === 'Left') throw new Error(`run create failed: ${run.left._tag}`)

  const path = ledgerPath(stores.dataDir, IDENTITY.sessionId, IDENTITY.runId)
  const fd = openSync(path, 'wx')
  const b = makeLedgerBuilderUnsafe(IDENTITY)
  let chunk = []
  let chunkChars = 0
  const push = (row) => {
    const line = `${JSON.stringify(row)}\n`
    chunk.push(line)
    chunkChars += line.length
    if (chunkChars > 4 << 20) flush()
  }
  const flush = () => {
    if (chunk.length > 0) writeSync(fd, chunk.join(''))
    chunk = []
    chunkChars = 0
  }
  try {
    push(b.userText('Refactor the parser module and run the tests.'))
    // user + (0–2 fillers) + steps × 3 + terminal = events; the last step ends with a tool response,
    // the boundary a continuation resumes from.
    const middle = events - 2
    const steps = Math.floor(middle / 3)
    for (let i = 0; i < middle - steps * 3; i += 1) push(b.thinking(`Planning the work, part ${i + 1}.`))
    for (let step = 1; step <= steps; step += 1) for (const row of stepRows(b, step)) push(row)
    push(b.terminal())
    flush()
  } finally {
    closeSync(fd)
  }
  return { path, bytes: statSync(path).size }
}
