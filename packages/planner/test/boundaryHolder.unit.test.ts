import { describe, expect, it } from 'vitest'
import { boundaryHolderOf } from '../src/index.js'
import { claim, continuationHeader, header } from './givenLedger.js'

const source = header()
const boundary = { sourceRunId: 'run-1', highWater: 4 }
const next = { runId: 'run-2', invocationId: 'invocation-2', turnId: 'turn-2' }

describe('boundaryHolderOf', () => {
  it.each([
    ['nothing holds it', [source], [], undefined],
    ['a continuation from it', [source, continuationHeader(next, source, 4)], [], { runId: 'run-2', heldBy: 'run' }],
    ['a continuation from another high-water', [continuationHeader(next, source, 3)], [], undefined],
    ['a claim on it', [source], [claim({})], { runId: 'run-9', heldBy: 'claim' }],
    ['a claim on another high-water', [source], [claim({ sourceRuntimeEventHighWater: 5 })], undefined],
    [
      'a run and a claim (the run is named)',
      [continuationHeader(next, source, 4)],
      [claim({})],
      { runId: 'run-2', heldBy: 'run' },
    ],
    [
      'a run that names itself as its source (never its own holder)',
      [continuationHeader({ ...next, runId: 'run-1' }, source, 4)],
      [],
      undefined,
    ],
  ] as const)('when %s, answers its holder', (_name, runs, claims, expected) => {
    expect(boundaryHolderOf(runs, claims, boundary)).toEqual(expected)
  })
})
