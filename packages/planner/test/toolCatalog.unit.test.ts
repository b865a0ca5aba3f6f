/**
 * The catalog gate over tools from servers (MCP): a call records its tool's server and declaration
 * digest on its `function_call` row; planning parks `tool_catalog_mismatch` when that tool is gone,
 * declared differently now, or its server did not start — naming the server and the tool — and plans
 * exactly as before for ledgers and hosts without recorded sources.
 */
import { type RuntimeEvent, toolSourceDelta } from '@maka/events'
import { describe, expect, it } from 'vitest'
import type { HostFacts } from '../src/index.js'
import { givenLedger, journalFacts, rows } from './givenLedger.js'

const TOOL = 'mcp__fs__read_text_file'
const DIGEST = `sha256:${'a'.repeat(64)}`
const OTHER = `sha256:${'b'.repeat(64)}`

// Records the source on a call row, as the executor does for a tool that has one.
const withSource = (call: RuntimeEvent, server: string, digest: string): RuntimeEvent => ({
  ...call,
  actions: { stateDelta: toolSourceDelta({ server, digest }) },
})

// A protocol run whose MCP call was dispatched and answered; then a second turn's user text … the crash.
const answeredRun = (source: { server: string; digest: string } | null) => {
  const l = rows()
  const user = l.protocolUserText('read it')
  const bare = l.protocolCall('call-1', TOOL, { path: 'a.txt' })
  const call = source === null ? bare : withSource(bare, source.server, source.digest)
  return [user, call, l.dispatch(call, 'replay_safe'), l.outcome(call, 'normal_t2'), l.terminal()]
}

// A protocol run killed with the MCP call dispatched and no response.
const openRun = (mode: 'replay_safe' | 'never_auto_retry') => {
  const l = rows()
  const user = l.protocolUserText('read it')
  const call = withSource(l.protocolCall('call-1', TOOL, { path: 'a.txt' }), 'fs', DIGEST)
  return [user, call, l.dispatch(call, mode), l.terminal()]
}

const mcpFacts = (
  catalog: NonNullable<HostFacts['toolCatalog']>,
  extra: Partial<HostFacts> = {},
): Partial<HostFacts> => ({
  ...journalFacts,
  availableToolNames: [...(journalFacts.availableToolNames ?? []), ...Object.keys(catalog)],
  toolRecoveryModes: {
    ...journalFacts.toolRecoveryModes,
    ...Object.fromEntries(Object.keys(catalog).map((n) => [n, 'replay_safe' as const])),
  },
  toolCatalog: catalog,
  ...extra,
})

describe('the catalog gate over server tools', () => {
  describe('when the tool is declared as it was', () => {
    it('continues and snapshots the catalog', () => {
      const { plan } = givenLedger(answeredRun({ server: 'fs', digest: DIGEST }))
        .whenPlanning(mcpFacts({ [TOOL]: { server: 'fs', digest: DIGEST } }))
        .thenContinues()
      expect(plan.continuation?.safetySnapshot.toolCatalog).toEqual({ [TOOL]: { server: 'fs', digest: DIGEST } })
    })

    it('reissues a dispatched read', () => {
      const { plan } = givenLedger(openRun('replay_safe'))
        .whenPlanning(mcpFacts({ [TOOL]: { server: 'fs', digest: DIGEST } }))
        .thenContinues()
      expect(plan.continuation?.settlementPlan?.[0]?.action).toBe('reissue')
    })
  })

  describe('when the tool changed its declaration', () => {
    it('parks tool_catalog_mismatch naming the server and the tool', () => {
      givenLedger(answeredRun({ server: 'fs', digest: DIGEST }))
        .whenPlanning(mcpFacts({ [TOOL]: { server: 'fs', digest: OTHER } }))
        .thenParks(['tool_catalog_mismatch'])
        .thenDetail('tool_catalog_mismatch', {
          missingToolNames: [TOOL],
          serverTools: [{ toolName: TOOL, server: 'fs', change: 'changed' }],
        })
    })

    it('parks a dispatched read instead of reissuing it under another declaration', () => {
      const { plan } = givenLedger(openRun('replay_safe'))
        .whenPlanning(mcpFacts({ [TOOL]: { server: 'fs', digest: OTHER } }))
        .thenParks(['tool_catalog_mismatch'])
      expect(plan.openToolOperations?.[0]).toMatchObject({ action: null, reason: 'tool_catalog_mismatch' })
    })

    it('parks when another server serves the name now', () => {
      givenLedger(answeredRun({ server: 'fs', digest: DIGEST }))
        .whenPlanning(mcpFacts({ [TOOL]: { server: 'other', digest: DIGEST } }))
        .thenParks(['tool_catalog_mismatch'])
    })
  })

  describe('when the tool is gone', () => {
    it('names the server and says the tool is absent', () => {
      givenLedger(answeredRun({ server: 'fs', digest: DIGEST }))
        .whenPlanning(mcpFacts({}))
        .thenParks(['tool_catalog_mismatch'])
        .thenDetail('tool_catalog_mismatch', {
          missingToolNames: [TOOL],
          serverTools: [{ toolName: TOOL, server: 'fs', change: 'absent' }],
        })
    })

    it("gives the server's reason when the server did not start", () => {
      givenLedger(answeredRun({ server: 'fs', digest: DIGEST }))
        .whenPlanning(
          mcpFacts({}, { unavailableToolServers: [{ server: 'fs', reason: 'it did not answer within 5 ms' }] }),
        )
        .thenParks(['tool_catalog_mismatch'])
        .thenDetail('tool_catalog_mismatch', {
          missingToolNames: [TOOL],
          serverTools: [
            {
              toolName: TOOL,
              server: 'fs',
              change: 'server_unavailable',
              serverReason: 'it did not answer within 5 ms',
            },
          ],
        })
    })
  })

  describe('when nothing recorded a source', () => {
    it('judges by name alone, as before', () => {
      givenLedger(answeredRun(null))
        .whenPlanning(mcpFacts({ [TOOL]: { server: 'fs', digest: OTHER } }))
        .thenContinues()
    })

    it("names the server from the tool's name when its call recorded none", () => {
      givenLedger(answeredRun(null))
        .whenPlanning({ ...journalFacts })
        .thenParks(['tool_catalog_mismatch'])
        .thenDetail('tool_catalog_mismatch', {
          missingToolNames: [TOOL],
          serverTools: [{ toolName: TOOL, server: 'fs', change: 'absent' }],
        })
    })
  })

  it('parks a dispatched never_auto_retry call as tool_outcome_unknown when its tool is declared as it was', () => {
    givenLedger(openRun('never_auto_retry'))
      .whenPlanning({
        ...mcpFacts({ [TOOL]: { server: 'fs', digest: DIGEST } }),
        toolRecoveryModes: { [TOOL]: 'never_auto_retry' },
      })
      .thenParks(['tool_outcome_unknown'])
  })
})
