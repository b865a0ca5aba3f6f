/**
 * Given/when/then for the inspector: given session records written as real files, when inspecting
 * a real directory, then the facts (or the typed error) are as expected.
 */
import type { AgentRun, ShellRun } from '@maka/events'
import type { HostFacts, UnsettledOperation } from '@maka/planner'
import { expect } from 'vitest'
import type { InspectError } from '../InspectError.js'
import { makeHostInspector, type HostInspectorDeps, type InspectInput } from '../makeHostInspector.js'
import type { DataDirFixture } from './fileSessionState.js'
import { SESSION_ID } from './records.js'

/**
 * The outcome of one `inspect` call, with assertions.
 * @category unsafe
 */
export interface InspectOutcome {
  readonly facts: HostFacts
  thenSettled(): void
  thenUnsettled(operations: ReadonlyArray<UnsettledOperation>): void
  thenFails(tag: InspectError['_tag']): InspectError
}

/**
 * A session whose records are on disk, ready to be inspected.
 * @category unsafe
 */
export interface GivenSession {
  whenInspecting(input?: Partial<InspectInput>, deps?: Partial<HostInspectorDeps>): Promise<InspectOutcome>
}

/**
 * Writes the records into the fixture's data dir; `cwd` is the session folder used when inspecting.
 * @category unsafe
 */
export const givenSessionUnsafe = async (
  data: DataDirFixture,
  cwd: string,
  records: { readonly shellRuns?: ReadonlyArray<ShellRun>; readonly runs?: ReadonlyArray<AgentRun> } = {},
): Promise<GivenSession> => {
  for (const shellRun of records.shellRuns ?? []) await data.writeShellRun(shellRun)
  for (const run of records.runs ?? []) await data.writeRunHeader(run)
  return {
    whenInspecting: async (input = {}, deps = {}) => {
      const inspector = makeHostInspector({ port: data.port, toolNames: () => ['read_file'], ...deps })
      const result = await inspector.inspect({ sessionId: SESSION_ID, sessionCwd: cwd, ...input })()
      const facts = (): HostFacts => {
        if (result._tag === 'Left') throw new Error(`expected facts, got ${result.left.message}`)
        return result.right
      }
      return {
        get facts() {
          return facts()
        },
        thenSettled() {
          expect(result).toMatchObject({ _tag: 'Right', right: { backgroundOperationsSettled: true } })
          expect(facts().unsettledOperations).toEqual([])
        },
        thenUnsettled(operations) {
          expect(result).toMatchObject({ _tag: 'Right', right: { backgroundOperationsSettled: false } })
          expect(facts().unsettledOperations).toEqual(operations)
        },
        thenFails(tag) {
          if (result._tag === 'Right') throw new Error(`expected ${tag}, got facts`)
          expect(result.left._tag).toBe(tag)
          expect(result.left.message.length).toBeGreaterThan(0)
          return result.left
        },
      }
    },
  }
}
