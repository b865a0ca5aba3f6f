/**
 * The main-process handlers in Node, through a fake `ipcMain`, against real file stores in temp
 * dirs holding sessions interrupted by SIGKILLing real turns.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ParkReasonSentences, nextStepForPark } from '@maka/events'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
import { makeFileRuntime } from '@maka/executor'
import { makeScriptedProvider } from '@maka/providers'
import { builtinTools } from '@maka/tools'
import {
  Channels,
  type HostMessage,
  type IpcMainLike,
  type ResumeLatestResult,
  type ResumePlanResult,
  type SessionListItem,
  type SessionView,
  type StartupReport,
  makeSessionServices,
  registerSessionIpc,
} from '../src/index.js'
import {
  interruptedSession,
  ledgerRows,
  removeScratch,
  runHeaders,
  scratch,
  startupInChild,
  waitFor,
} from './support/scratch.js'

afterAll(removeScratch)

type Handler = (event: unknown, ...args: Array<unknown>) => unknown

const fakeIpcMain = () => {
  const handlers = new Map<string, Handler>()
  const ipc: IpcMainLike = { handle: (channel, listener) => void handlers.set(channel, listener) }
  const invoke = async <A>(channel: string, ...args: Array<unknown>): Promise<A> => {
    const handler = handlers.get(channel)
    if (handler === undefined) throw new Error(`no handler for ${channel}`)
    return (await handler({ sender: 'renderer' }, ...args)) as A
  }
  return { ipc, handlers, invoke }
}

const host = (dataDir: string, safeResume: boolean) => {
  const messages: Array<HostMessage> = []
  const services = makeSessionServices({ dataDir, safeResume, emit: (m) => messages.push(m) })
  const fake = fakeIpcMain()
  registerSessionIpc(fake.ipc, services, 'electron')
  return { services, messages, ...fake }
}

const continuationsOf = async (dataDir: string, sessionId: string) =>
  (await runHeaders(dataDir, sessionId)).filter((h) => h.continuationSource !== undefined)

describe('sessions:resumeLatest', () => {
  it('plans the latest boundary of the bannered session and starts only an approved plan', async () => {
    const { dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 's-resume', 'after_tool_response')
    const app = host(dataDir, true)
    await app.services.startup()
    // Startup already continued it: a second start finds nothing to continue.
    await app.services.idle()
    const continued = await continuationsOf(dataDir, 's-resume')
    expect(continued).toHaveLength(1)

    const again = await app.invoke<ResumeLatestResult>(Channels.resumeLatest, 's-resume')
    expect(again.disposition).toBe('park')
    expect(await continuationsOf(dataDir, 's-resume')).toHaveLength(1)
  })

  it('answers started before the run ends, streams its events, writes one continuation and no user row', async () => {
    const { dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 's-banner', 'after_tool_response')
    // Recovery only (flag off for the pass), so the session waits with its banner.
    await makeSessionServices({ dataDir, safeResume: false, emit: () => {} }).startup()
    // The continuation waits on a delay step the test ends, so "started" provably comes first.
    const script = join(dirname(dataDir), 'slow.json')
    await writeFile(script, JSON.stringify([{ delayMs: 300_000 }, { text: 'never reached' }]))
    const messages: Array<HostMessage> = []
    const services = makeSessionServices({
      dataDir,
      safeResume: true,
      providerFlags: { script },
      emit: (m) => messages.push(m),
    })
    const fake = fakeIpcMain()
    registerSessionIpc(fake.ipc, services, 'electron')
    const app = { services, messages, ...fake }
    const listed = await app.invoke<ReadonlyArray<SessionListItem>>(Channels.list)
    const row = listed.find((s) => s.sessionId === 's-banner')
    expect(row?.interrupted).toBe(true)
    expect(row?.latestRun?.failureClass).toBe('app_restarted')

    const result = await app.invoke<ResumeLatestResult>(Channels.resumeLatest, 's-banner')
    if (result.disposition !== 'started') throw new Error(`expected started, got ${JSON.stringify(result)}`)
    expect(result.runId).not.toBe(row?.latestRun?.runId)
    expect(app.messages.some((m) => m.type === 'runEnded')).toBe(false)
    expect(['created', 'running']).toContain(
      (await runHeaders(dataDir, 's-banner')).find((h) => h.runId === result.runId)?.status,
    )
    await app.services.cancelAll()
    const ended = app.messages.find((m) => m.type === 'runEnded' && m.runId === result.runId)
    expect(ended).toMatchObject({ status: 'cancelled', kind: 'continuation' })
    const streamed = app.messages.filter((m) => m.type === 'item' && m.item.runId === result.runId)
    expect(streamed.map((m) => (m.type === 'item' ? m.item.kind : ''))).toContain('continuation_start')

    const rows = await ledgerRows(dataDir, 's-banner', result.runId)
    expect(rows.filter((r) => r['role'] === 'user')).toHaveLength(0)
    expect(rows.filter((r) => r['turnId'] === result.turnId).length).toBe(rows.length)
    expect(await continuationsOf(dataDir, 's-banner')).toHaveLength(1)

    const view = await app.invoke<SessionView>(Channels.get, 's-banner')
    expect(view.session.interrupted).toBe(false)
    expect(view.items.some((i) => i.kind === 'tool_call' && i.toolName === 'list_dir')).toBe(true)
  })

  it('returns every park reason with its sentence and starts nothing', async () => {
    const { dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 's-park', 'after_function_call')
    const app = host(dataDir, true)
    const report = await app.services.startup()
    expect(report.continued).toHaveLength(0)
    const result = await app.invoke<ResumeLatestResult>(Channels.resumeLatest, 's-park')
    if (result.disposition !== 'park') throw new Error(`expected park, got ${JSON.stringify(result)}`)
    expect(result.rejectionReasons).toContain('dangling_tool_state')
    expect(result.messages).toEqual(
      result.rejectionReasons.map((code) => ParkReasonSentences[code as keyof typeof ParkReasonSentences]),
    )
    expect(result.nextStep).toBe(nextStepForPark(result.rejectionReasons[0] ?? ''))
    expect(await continuationsOf(dataDir, 's-park')).toHaveLength(0)
  })

  it('takes a session id only: anything else is refused before any read', async () => {
    const { dataDir } = await scratch()
    const app = host(dataDir, true)
    await expect(app.invoke(Channels.resumeLatest, 's-1', { cwdMatches: true })).rejects.toMatchObject({
      code: 'bad_input',
    })
    await expect(app.invoke(Channels.resumeLatest, '../etc')).rejects.toMatchObject({ code: 'bad_input' })
    await expect(app.invoke(Channels.resumeLatest, 'nobody')).rejects.toMatchObject({ code: 'unknown_session' })
  })
})

describe('sessions:get', () => {
  it('keeps the newest 500 rows of every run in run order, and counts the rest as omitted', async () => {
    const { dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 's-long', 'after_tool_response')
    await makeSessionServices({ dataDir, safeResume: false, emit: () => {} }).startup()
    const [first] = await runHeaders(dataDir, 's-long')
    if (first === undefined) throw new Error('no run')
    const runsDir = join(dataDir, 'sessions', 's-long', 'runs')
    const base = JSON.parse(await readFile(join(runsDir, first.runId, 'run.json'), 'utf8')) as Record<string, unknown>
    // Two later runs written whole: 400 rows, then 350, so the newest 500 start inside the first.
    const later: Array<ReadonlyArray<string>> = []
    for (const [n, rows] of [400, 350].entries()) {
      const identity = {
        sessionId: 's-long',
        runId: `run-long-${n}`,
        invocationId: `inv-long-${n}`,
        turnId: `turn-long-${n}`,
      }
      const createdAt = `2099-01-0${n + 1}T00:00:00.000Z`
      await mkdir(join(runsDir, identity.runId))
      await writeFile(
        join(runsDir, identity.runId, 'run.json'),
        JSON.stringify({ ...base, ...identity, createdAt, updatedAt: createdAt }),
      )
      const b = makeLedgerBuilderUnsafe(identity)
      const events = [b.userText(`turn ${n}`), ...Array.from({ length: rows - 1 }, (_, i) => b.modelText(`row ${i}`))]
      await writeFile(
        join(runsDir, identity.runId, 'runtime-events.jsonl'),
        events.map((event) => `${JSON.stringify(event)}\n`).join(''),
      )
      later.push(events.map((event) => event.id))
    }
    const app = host(dataDir, false)
    const view = await app.invoke<SessionView>(Channels.get, 's-long')
    const firstRows = (await ledgerRows(dataDir, 's-long', first.runId)).length
    expect(view.omitted).toBe(firstRows + 400 + 350 - 500)
    expect(view.items.map((item) => item.eventId)).toEqual([...(later[0] ?? []).slice(-150), ...(later[1] ?? [])])
  })
})

describe('sessions:resumePlan', () => {
  it('says what Safe resume would do — park with sentences and the next step, or continue — and starts nothing', async () => {
    const { dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 's-park', 'after_function_call')
    // Never recovered: its process died while the host runs, so the plan closes its run first.
    await interruptedSession(dataDir, workspace, 's-live', 'after_tool_response')
    const app = host(dataDir, true)
    const before = await runHeaders(dataDir, 's-park')
    const park = await app.invoke<ResumePlanResult>(Channels.resumePlan, 's-park')
    if (park.disposition !== 'park') throw new Error(`expected park, got ${JSON.stringify(park)}`)
    expect(park.rejectionReasons).toContain('dangling_tool_state')
    expect(park.messages).toEqual(
      park.rejectionReasons.map((code) => ParkReasonSentences[code as keyof typeof ParkReasonSentences]),
    )
    expect(park.nextStep).toBe(nextStepForPark(park.rejectionReasons[0] ?? ''))
    // The first plan closed the dead run (the recovery every plan starts with) and added none; a
    // second plan writes nothing.
    const after = await runHeaders(dataDir, 's-park')
    expect(after.map((h) => h.runId)).toEqual(before.map((h) => h.runId))
    expect(await app.invoke<ResumePlanResult>(Channels.resumePlan, 's-park')).toEqual(park)
    expect(await runHeaders(dataDir, 's-park')).toEqual(after)

    const [source] = await runHeaders(dataDir, 's-live')
    const plan = await app.invoke<ResumePlanResult>(Channels.resumePlan, 's-live')
    expect(plan).toEqual({ disposition: 'continue', sourceRunId: source?.runId })
    expect(await continuationsOf(dataDir, 's-live')).toHaveLength(0)
    expect(app.messages).toEqual([])
    await expect(app.invoke(Channels.resumePlan, '../etc')).rejects.toMatchObject({ code: 'bad_input' })
    await expect(app.invoke(Channels.resumePlan, 'nobody')).rejects.toMatchObject({ code: 'unknown_session' })
  })
})

describe('without MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1', () => {
  it('registers no resume handler and continues nothing at startup', async () => {
    const { dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 's-off', 'after_tool_response')
    const app = host(dataDir, false)
    expect(app.handlers.has(Channels.resumeLatest)).toBe(false)
    expect(app.handlers.has(Channels.resumePlan)).toBe(false)
    expect([...app.handlers.keys()].sort()).toEqual(
      [Channels.info, Channels.list, Channels.get, Channels.send, Channels.answerPermission].sort(),
    )
    const report = await app.services.startup()
    await app.services.idle()
    expect(report.recoveryActions).toBeGreaterThan(0)
    expect(report.continued).toHaveLength(0)
    expect(await continuationsOf(dataDir, 's-off')).toHaveLength(0)
    const headers = await runHeaders(dataDir, 's-off')
    expect(headers.map((h) => h.failureClass)).toEqual(['app_restarted'])
    expect(await app.invoke(Channels.info)).toEqual({ safeResume: false, transport: 'electron', autoContinued: [] })
  })
})

describe('startup', () => {
  it('tells a window that connects after start-up which sessions it continued', async () => {
    const { dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 's-late', 'after_tool_response')
    const app = host(dataDir, true)
    expect(await app.invoke(Channels.info)).toMatchObject({ safeResume: true, autoContinued: [] })
    const report = await app.services.startup()
    await app.services.idle()
    const [continuation] = await continuationsOf(dataDir, 's-late')
    expect(report.continued).toEqual([{ sessionId: 's-late', runId: continuation?.runId }])
    expect(await app.invoke(Channels.info)).toMatchObject({ autoContinued: report.continued })
  })

  it('never auto-continues a session whose latest run records a person’s verdict (resolve)', async () => {
    const { dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 's-resolved', 'after_function_call')
    const { runtime } = makeFileRuntime({
      dataDir,
      tools: builtinTools(),
      providerFor: (run) => makeScriptedProvider({ steps: [], toolCallIdPrefix: run.runId }),
      safeBoundaryResumeEnabled: true,
      toolJournal: true,
      permissionMode: 'allow',
    })
    await runtime.recover({ sessionIds: ['s-resolved'] })
    const parked = await runtime.plan({ sessionId: 's-resolved' })
    const callIds = parked.diagnostics.find((d) => d.code === 'dangling_tool_state')?.detail['toolCallIds']
    const [callId] = callIds as ReadonlyArray<string>
    const resolved = await runtime.resolve({
      sessionId: 's-resolved',
      target: { callId: callId ?? '' },
      verdict: 'failed',
      actor: 'desktop',
    })
    expect(resolved._tag).toBe('Resolved')
    const app = host(dataDir, true)
    const report = await app.services.startup()
    await app.services.idle()
    expect(report.continued).toEqual([])
    expect(await continuationsOf(dataDir, 's-resolved')).toHaveLength(1)
    // The person resumes it explicitly.
    expect((await app.invoke<ResumeLatestResult>(Channels.resumeLatest, 's-resolved')).disposition).toBe('started')
  })

  it('auto-continues exactly the eligible sessions, each once, when two app instances start at once', async () => {
    const { dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 's-a', 'after_tool_response')
    await interruptedSession(dataDir, workspace, 's-b', 'after_tool_response')
    await interruptedSession(dataDir, workspace, 's-dangling', 'after_function_call')
    const reports = (await Promise.all([
      startupInChild(dataDir),
      startupInChild(dataDir),
    ])) as unknown as Array<StartupReport>
    const continued = reports.flatMap((r) => r.continued.map((c) => c.sessionId)).sort()
    // The reasons each instance gave for what it left, so a failure says which gate parked.
    const left = JSON.stringify(reports.map((r) => r.notContinued))
    expect(continued, left).toEqual(['s-a', 's-b'])
    for (const sessionId of ['s-a', 's-b']) {
      const runs = await continuationsOf(dataDir, sessionId)
      expect(runs).toHaveLength(1)
      expect(runs[0]?.status).toBe('completed')
    }
    expect(await continuationsOf(dataDir, 's-dangling')).toHaveLength(0)

    // A third start finds every eligible session already continued.
    const later = host(dataDir, true)
    const report = await later.services.startup()
    await later.services.idle()
    expect(report.continued).toHaveLength(0)
    for (const sessionId of ['s-a', 's-b']) expect(await continuationsOf(dataDir, sessionId)).toHaveLength(1)
  })
})

describe('sessions:send and permissions', () => {
  it('starts a turn, puts a mutating tool call to the renderer and records its answer', async () => {
    const { dataDir, workspace } = await scratch()
    await interruptedSession(dataDir, workspace, 's-send', 'after_tool_response')
    const messages: Array<HostMessage> = []
    const services = makeSessionServices({
      dataDir,
      safeResume: true,
      choice: {
        kind: 'scripted',
        steps: [{ toolCall: { name: 'write_file', args: { path: 'out.txt', content: 'hi' } } }, { text: 'written' }],
      },
      emit: (m) => messages.push(m),
    })
    const fake = fakeIpcMain()
    registerSessionIpc(fake.ipc, services, 'http')
    await expect(fake.invoke(Channels.send, 's-send', '')).rejects.toMatchObject({ code: 'bad_input' })
    const started = await fake.invoke<{ disposition: string; runId: string }>(Channels.send, 's-send', 'write it')
    expect(started.disposition).toBe('started')
    const prompt = await waitFor(() => {
      const m = messages.find((x) => x.type === 'permission')
      return m?.type === 'permission' ? m.prompt : undefined
    }, 'the permission prompt')
    expect(prompt.toolName).toBe('write_file')
    expect(await fake.invoke(Channels.answerPermission, prompt.requestId, 'deny')).toBe(true)
    expect(await fake.invoke(Channels.answerPermission, prompt.requestId, 'allow')).toBe(false)
    await services.idle()
    const rows = await ledgerRows(dataDir, 's-send', started.runId)
    const decision = rows.find((r) => (r['actions'] as Record<string, unknown> | undefined)?.['permissionDecision'])
    expect((decision?.['actions'] as { permissionDecision: { decision: string } }).permissionDecision.decision).toBe(
      'deny',
    )
    expect(rows.filter((r) => r['role'] === 'user')).toHaveLength(1)
  })
})
