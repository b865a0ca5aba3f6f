/**
 * The invariant checker on hand-made data dirs: a healthy lineage passes, and each broken invariant
 * (written to disk the way a buggy product would leave it) is reported with its code. These prove
 * that `maka chaos` can fail: a checker that never fires would pass every run.
 */
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  type DataDirSnapshot,
  type Violation,
  checkInvariants,
  effectToken,
  emptySnapshot,
  readDataDir,
  readEffects,
  tokenOfCall,
} from '../src/index.js'

const roots: Array<string> = []
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })))
})

const SESSION = 'chaos-1'
const SOURCE = 'run-source'
const TARGET = 'run-target'
const TOKEN = effectToken(1, 1)

interface RunSpec {
  readonly runId: string
  readonly status: string
  readonly continues?: { readonly runId: string; readonly highWater: number }
}

/** A data dir and a workspace in a temp folder, with writers for the files the product would leave. */
const givenWorld = async () => {
  const root = await mkdtemp(join(tmpdir(), 'maka-chaos-check-'))
  roots.push(root)
  const dataDir = join(root, 'data')
  const workspace = join(root, 'workspace')
  await mkdir(workspace, { recursive: true })
  const sessionDir = join(dataDir, 'sessions', SESSION)
  const runDir = (runId: string) => join(sessionDir, 'runs', runId)
  let n = 0
  const row = (runId: string, fields: Record<string, unknown>) => ({
    id: `${runId}-e${(n += 1)}`,
    sessionId: SESSION,
    invocationId: `inv-${runId}`,
    runId,
    turnId: `turn-${runId}`,
    ts: 1_700_000_000_000 + n,
    partial: false,
    ...fields,
  })
  const world = {
    dataDir,
    workspace,
    header: async (spec: RunSpec) => {
      await mkdir(runDir(spec.runId), { recursive: true })
      const source = spec.continues
      await writeFile(
        join(runDir(spec.runId), 'run.json'),
        JSON.stringify({
          runId: spec.runId,
          sessionId: SESSION,
          turnId: `turn-${spec.runId}`,
          invocationId: `inv-${spec.runId}`,
          status: spec.status,
          cwd: workspace,
          providerId: 'scripted',
          modelId: 'scripted',
          createdAt: '2026-01-01T00:00:00.000Z',
          updatedAt: '2026-01-01T00:00:00.000Z',
          ...(source === undefined
            ? {}
            : {
                parentRunId: source.runId,
                parentTurnId: `turn-${source.runId}`,
                continuationSource: {
                  sourceInvocationId: `inv-${source.runId}`,
                  sourceRunId: source.runId,
                  sourceTurnId: `turn-${source.runId}`,
                  sourceRuntimeEventHighWater: source.highWater,
                },
              }),
        }),
      )
    },
    append: async (runId: string, ...rows: ReadonlyArray<Record<string, unknown>>) => {
      await mkdir(runDir(runId), { recursive: true })
      await appendFile(
        join(runDir(runId), 'runtime-events.jsonl'),
        rows.map((r) => `${JSON.stringify(row(runId, r))}\n`).join(''),
      )
    },
    appendRaw: (runId: string, text: string) => appendFile(join(runDir(runId), 'runtime-events.jsonl'), text),
    claim: async (sourceRunId: string, highWater: number, targetRunId: string) => {
      await mkdir(join(sessionDir, 'claims'), { recursive: true })
      await writeFile(
        join(sessionDir, 'claims', `${sourceRunId}@${highWater}.json`),
        JSON.stringify({ sessionId: SESSION, sourceRunId, sourceRuntimeEventHighWater: highWater, targetRunId }),
      )
    },
    shellEffect: (token: string) => appendFile(join(workspace, 'effects.log'), `${token}\n`),
    writeEffect: async (name: string) => {
      await mkdir(join(workspace, 'w'), { recursive: true })
      await writeFile(join(workspace, 'w', name), `${name}\n`)
    },
    check: async (before: DataDirSnapshot = emptySnapshot): Promise<ReadonlyArray<Violation>> =>
      checkInvariants({
        before,
        after: await readDataDir(dataDir),
        effects: await readEffects(workspace),
        tokenOf: tokenOfCall,
      }),
    snapshot: () => readDataDir(dataDir),
  }
  return world
}

const userText = { role: 'user', author: 'user', content: { kind: 'text', text: 'Run the chaos script.' } }
const shellCall = (runId: string) => ({
  role: 'model',
  author: 'agent',
  content: {
    kind: 'function_call',
    id: `${runId}-1`,
    name: 'shell',
    args: { command: `printf '%s\\n' ${TOKEN} >> effects.log` },
  },
})
const shellResponse = (runId: string) => ({
  role: 'tool',
  author: 'tool',
  content: { kind: 'function_response', id: `${runId}-1`, name: 'shell', result: { exitCode: 0 } },
})
const terminal = (status: 'completed' | 'failed') => ({
  role: 'system',
  author: 'system',
  status,
  actions: { endInvocation: true },
})
const continuationStart = (sourceRunId: string, highWater: number) => ({
  role: 'system',
  author: 'system',
  actions: { stateDelta: { continuationStart: true } },
  refs: {
    sourceInvocationId: `inv-${sourceRunId}`,
    sourceRunId,
    sourceTurnId: `turn-${sourceRunId}`,
    sourceRuntimeEventHighWater: highWater,
  },
})

/** A turn killed after its shell response (recovered as failed), continued once and completed. */
const givenHealthyLineage = async () => {
  const world = await givenWorld()
  await world.header({ runId: SOURCE, status: 'failed' })
  await world.append(SOURCE, userText, shellCall(SOURCE), shellResponse(SOURCE), terminal('failed'))
  await world.shellEffect(TOKEN)
  await world.claim(SOURCE, 4, TARGET)
  await world.header({ runId: TARGET, status: 'completed', continues: { runId: SOURCE, highWater: 4 } })
  await world.append(TARGET, continuationStart(SOURCE, 4), terminal('completed'))
  return world
}

const codes = (violations: ReadonlyArray<Violation>) => violations.map((v) => v.code)

describe('checkInvariants', () => {
  describe('when the lineage is healthy', () => {
    it('reports nothing', async () => {
      const world = await givenHealthyLineage()
      const before = await world.snapshot()
      expect(await world.check()).toEqual([])
      expect(await world.check(before)).toEqual([])
    })
  })

  describe('when two runs continue one boundary', () => {
    it('reports duplicate_continuation naming both runs', async () => {
      const world = await givenHealthyLineage()
      await world.header({ runId: 'run-second', status: 'completed', continues: { runId: SOURCE, highWater: 4 } })
      await world.append('run-second', continuationStart(SOURCE, 4), terminal('completed'))
      const violations = await world.check()
      expect(codes(violations)).toContain('duplicate_continuation')
      expect(violations.find((v) => v.code === 'duplicate_continuation')?.message).toContain(
        `${SOURCE}@4 is continued by 2 runs: run-second, ${TARGET}`,
      )
      // The second run has no claim of its own: the claim names the first.
      expect(violations.filter((v) => v.code === 'continuation_without_claim').map((v) => v.runId)).toEqual([
        'run-second',
      ])
    })

    it('also finds a second continuation-start row of the boundary whose header never appeared', async () => {
      const world = await givenHealthyLineage()
      await world.append('run-headerless', continuationStart(SOURCE, 4))
      expect(codes(await world.check())).toEqual(['duplicate_continuation'])
    })
  })

  describe('when a continuation has no claim file', () => {
    it('reports continuation_without_claim', async () => {
      const world = await givenWorld()
      await world.header({ runId: SOURCE, status: 'failed' })
      await world.append(SOURCE, userText, terminal('failed'))
      await world.header({ runId: TARGET, status: 'completed', continues: { runId: SOURCE, highWater: 2 } })
      await world.append(TARGET, continuationStart(SOURCE, 2), terminal('completed'))
      expect(codes(await world.check())).toEqual(['continuation_without_claim'])
    })
  })

  describe('when a tool call’s side effect happened twice', () => {
    it('reports side_effect_repeated for a shell line appended twice', async () => {
      const world = await givenHealthyLineage()
      await world.shellEffect(TOKEN)
      const violations = await world.check()
      expect(codes(violations)).toEqual(['side_effect_repeated'])
      expect(violations[0]?.message).toContain(`${TOKEN} happened 2 times (tool calls ${SOURCE}-1)`)
    })

    it('accepts a continuation asking again for a call its history answered (a stale script, not a replay)', async () => {
      const world = await givenHealthyLineage()
      const again = 'run-again'
      await world.claim(TARGET, 2, again)
      await world.header({ runId: again, status: 'completed', continues: { runId: TARGET, highWater: 2 } })
      await world.append(
        again,
        continuationStart(TARGET, 2),
        shellCall(again),
        shellResponse(again),
        terminal('completed'),
      )
      await world.shellEffect(TOKEN)
      expect(codes(await world.check())).toEqual([])
      // One more effect than the history can explain is still a repeat.
      await world.shellEffect(TOKEN)
      expect(codes(await world.check())).toEqual(['side_effect_repeated'])
    })

    it('reports a continuation asking again for a call its history left unanswered', async () => {
      const world = await givenWorld()
      await world.header({ runId: SOURCE, status: 'failed' })
      await world.append(SOURCE, userText, shellCall(SOURCE), terminal('failed'))
      await world.shellEffect(TOKEN)
      await world.claim(SOURCE, 3, TARGET)
      await world.header({ runId: TARGET, status: 'completed', continues: { runId: SOURCE, highWater: 3 } })
      await world.append(
        TARGET,
        continuationStart(SOURCE, 3),
        shellCall(TARGET),
        shellResponse(TARGET),
        terminal('completed'),
      )
      await world.shellEffect(TOKEN)
      expect(codes(await world.check())).toEqual(['side_effect_repeated'])
    })

    it('reports it for a write_file that created its file again after it was counted', async () => {
      const world = await givenWorld()
      const token = effectToken(1, 2)
      await world.header({ runId: SOURCE, status: 'running' })
      await world.append(SOURCE, userText, {
        role: 'model',
        author: 'agent',
        content: {
          kind: 'function_call',
          id: `${SOURCE}-1`,
          name: 'write_file',
          args: { path: `w/${token}`, content: `${token}\n` },
        },
      })
      await world.writeEffect(`${token}.seen-1`)
      await world.writeEffect(token)
      expect(codes(await world.check())).toEqual(['side_effect_repeated'])
    })
  })

  describe('when a succeeded call’s response is committed but its effect never happened', () => {
    it('reports side_effect_missing', async () => {
      const world = await givenWorld()
      await world.header({ runId: SOURCE, status: 'running' })
      await world.append(SOURCE, userText, shellCall(SOURCE), shellResponse(SOURCE))
      expect(codes(await world.check())).toEqual(['side_effect_missing'])
    })
  })

  describe('when a terminal header has no terminal event', () => {
    it('reports terminal_header_without_event', async () => {
      const world = await givenWorld()
      await world.header({ runId: SOURCE, status: 'completed' })
      await world.append(SOURCE, userText, { role: 'model', author: 'agent', content: { kind: 'text', text: 'hi' } })
      expect(codes(await world.check())).toEqual(['terminal_header_without_event'])
    })

    it('reports a terminal event whose status disagrees with the header', async () => {
      const world = await givenWorld()
      await world.header({ runId: SOURCE, status: 'completed' })
      await world.append(SOURCE, userText, terminal('failed'))
      const violations = await world.check()
      expect(codes(violations)).toEqual(['terminal_header_without_event'])
      expect(violations[0]?.message).toContain('terminal event says failed')
    })
  })

  describe('when a row committed before the phase changed', () => {
    it('reports committed_row_changed for a rewritten row', async () => {
      const world = await givenWorld()
      await world.header({ runId: SOURCE, status: 'running' })
      await world.append(SOURCE, userText, { role: 'model', author: 'agent', content: { kind: 'text', text: 'a' } })
      const before = await world.snapshot()
      const path = join(world.dataDir, 'sessions', SESSION, 'runs', SOURCE, 'runtime-events.jsonl')
      const bytes = (before.runs.get(`${SESSION}/${SOURCE}`)?.ledger ?? Buffer.alloc(0)).toString('utf8')
      await writeFile(path, bytes.replace('"text":"a"', '"text":"b"'))
      expect(codes(await world.check(before))).toEqual(['committed_row_changed'])
    })

    it('reports a truncated ledger, and one that is gone', async () => {
      const world = await givenWorld()
      await world.header({ runId: SOURCE, status: 'running' })
      await world.append(SOURCE, userText, { role: 'model', author: 'agent', content: { kind: 'text', text: 'a' } })
      const before = await world.snapshot()
      const path = join(world.dataDir, 'sessions', SESSION, 'runs', SOURCE, 'runtime-events.jsonl')
      const bytes = before.runs.get(`${SESSION}/${SOURCE}`)?.ledger ?? Buffer.alloc(0)
      await writeFile(path, bytes.subarray(0, bytes.indexOf(0x0a) + 1))
      expect(codes(await world.check(before))).toEqual(['committed_row_changed'])
      await rm(path)
      const gone = await world.check(before)
      expect(codes(gone)).toEqual(['committed_row_changed'])
      expect(gone[0]?.message).toContain('is gone')
    })

    it('does not count a torn tail as committed: replacing it is the append rule, not a loss', async () => {
      const world = await givenWorld()
      await world.header({ runId: SOURCE, status: 'running' })
      await world.append(SOURCE, userText)
      await world.appendRaw(SOURCE, '{"id":"torn')
      const before = await world.snapshot()
      const path = join(world.dataDir, 'sessions', SESSION, 'runs', SOURCE, 'runtime-events.jsonl')
      const bytes = before.runs.get(`${SESSION}/${SOURCE}`)?.ledger ?? Buffer.alloc(0)
      await writeFile(path, bytes.subarray(0, bytes.indexOf(0x0a) + 1))
      await world.append(SOURCE, { role: 'model', author: 'agent', content: { kind: 'text', text: 'a' } })
      expect(await world.check(before)).toEqual([])
    })
  })

  describe('when a terminal run changes afterwards', () => {
    it('reports terminal_ledger_changed for a row appended to a completed run', async () => {
      const world = await givenHealthyLineage()
      const before = await world.snapshot()
      await world.append(TARGET, { role: 'model', author: 'agent', content: { kind: 'text', text: 'late' } })
      expect(codes(await world.check(before))).toEqual(['terminal_ledger_changed'])
    })

    it('reports a terminal header rewritten to another status', async () => {
      const world = await givenHealthyLineage()
      const before = await world.snapshot()
      await world.header({ runId: SOURCE, status: 'running' })
      const violations = await world.check(before)
      expect(codes(violations)).toEqual(['terminal_ledger_changed'])
      expect(violations[0]?.message).toContain('now says running')
    })
  })

  describe('when a claim changes or disappears', () => {
    it('reports claim_changed', async () => {
      const world = await givenHealthyLineage()
      const before = await world.snapshot()
      await world.claim(SOURCE, 4, 'run-other')
      expect(codes(await world.check(before))).toEqual(['continuation_without_claim', 'claim_changed'])
      await rm(join(world.dataDir, 'sessions', SESSION, 'claims', `${SOURCE}@4.json`))
      expect(codes(await world.check(before))).toEqual(['continuation_without_claim', 'claim_changed'])
    })
  })
})
