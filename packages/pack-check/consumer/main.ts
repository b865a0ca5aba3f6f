/**
 * A stranger's program, built against the installed tarballs (never the workspace): it writes a
 * golden ledger into a fresh data dir with `@maka/store-jsonl`, reads it back through the store, plans a
 * continuation with `@maka/planner`, and prints the plan's outline as one JSON line. Every other
 * published package is imported too, so a tarball that cannot load under plain node fails here.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkInvariants } from '@maka/chaos'
import {
  type AgentRun,
  decodeAgentRun,
  decodeRuntimeEvent,
  makeNonEmptyStringUnsafe,
  makeRunIdUnsafe,
} from '@maka/events'
import { makeFileRuntime } from '@maka/executor'
import { canonicalCwd } from '@maka/host-inspector'
import { planContinuation } from '@maka/planner'
import { projectResumePlan } from '@maka/projection'
import { makeScriptedProvider } from '@maka/providers'
import { builtinTools } from '@maka/tools'
import { describeStoreError } from '@maka/stores'
import { ledgerPath, makeFileStores } from '@maka/store-jsonl'
import * as E from 'fp-ts/lib/Either.js'

const fail = (message: string): never => {
  throw new Error(message)
}

const main = async (fixture: string): Promise<void> => {
  const bytes = await readFile(fixture, 'utf8')
  const firstLine = bytes.split('\n')[0] ?? fail(`${fixture} is empty`)
  const first = decodeRuntimeEvent(JSON.parse(firstLine))
  if (E.isLeft(first)) return fail(`${fixture} line 1: ${first.left}`)
  const { sessionId, invocationId, runId, turnId } = first.right
  const header = decodeAgentRun({
    runId,
    sessionId,
    turnId,
    invocationId,
    status: 'failed',
    cwd: '/workspace',
    providerId: 'scripted',
    modelId: 'scripted-1',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:01:00.000Z',
    workspaceIdentity: 'fs:1:2:/workspace',
    failureClass: 'app_restarted',
  })
  if (E.isLeft(header)) return fail(`header: ${header.left}`)
  const source: AgentRun = header.right

  const dataDir = await mkdtemp(join(tmpdir(), 'maka-consumer-'))
  try {
    const stores = makeFileStores(dataDir)
    const created = await stores.runs.create(source)()
    if (E.isLeft(created)) return fail(describeStoreError(created.left))
    await writeFile(ledgerPath(stores.dataDir, sessionId, runId), bytes)
    const ledger = await stores.events.read(sessionId, runId)()
    if (E.isLeft(ledger)) return fail(describeStoreError(ledger.left))

    const plan = planContinuation(
      {
        source,
        ledger: ledger.right,
        facts: {
          currentCwd: source.cwd,
          currentWorkspaceIdentity: 'fs:1:2:/workspace',
          backgroundOperationsSettled: true,
          unsettledOperations: [],
          availableToolNames: ['read_file', 'shell'],
        },
      },
      {
        invocationId: makeNonEmptyStringUnsafe('invocation-next'),
        runId: makeRunIdUnsafe('run-next'),
        turnId: makeNonEmptyStringUnsafe('turn-next'),
      },
    )
    const loaded = [
      checkInvariants,
      makeFileRuntime,
      canonicalCwd,
      projectResumePlan,
      makeScriptedProvider,
      builtinTools,
    ]
    console.log(
      JSON.stringify({
        disposition: plan.disposition,
        rejectionReasons: plan.rejectionReasons,
        sourceRuntimeEventHighWater: plan.sourceRuntimeEventHighWater,
        replayedRows: plan.continuation?.runtimeContext.length ?? null,
        loaded: loaded.map((f) => typeof f),
      }),
    )
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

await main(process.argv[2] ?? fail('usage: main.js <ledger.jsonl>'))
