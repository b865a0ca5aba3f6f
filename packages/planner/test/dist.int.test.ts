import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// fp-ts deep imports that pass tsc and vitest can still crash plain node; run the built output with it.
const script = `
import { planContinuation, makeRuntimeContinuationPlanner } from '@maka/planner'
import { makeLedgerBuilderUnsafe } from '@maka/events/testing'
const l = makeLedgerBuilderUnsafe()
const events = [l.userText('hi'), l.functionCall('c1', 'shell'), l.functionResponse('c1', 'shell'), l.terminal()]
const source = {
  runId: 'run-1', sessionId: 'session-1', turnId: 'turn-1', invocationId: 'invocation-1', status: 'failed',
  cwd: '/w', providerId: 'p', modelId: 'm', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z',
  workspaceIdentity: 'fs:1:2:/w',
}
const facts = { currentCwd: '/w', currentWorkspaceIdentity: 'fs:1:2:/w', backgroundOperationsSettled: true,
  unsettledOperations: [], availableToolNames: ['shell'] }
const plan = planContinuation({ source, ledger: { events, highWater: 4, tornTail: null, problem: null }, facts },
  { invocationId: 'i2', runId: 'r2', turnId: 't2' })
const planner = makeRuntimeContinuationPlanner({ store: {}, host: {}, ids: {}, safeBoundaryResumeEnabled: false })
const parked = await planner.plan({ sessionId: 'session-1' })()
console.log(JSON.stringify([plan.disposition, parked.rejectionReasons]))
`

describe('dist', () => {
  describe('when plain node imports the built package', () => {
    it('plans', () => {
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        encoding: 'utf8',
      })
      expect(JSON.parse(out)).toEqual(['continue', ['resume_feature_disabled']])
    })
  })
})
