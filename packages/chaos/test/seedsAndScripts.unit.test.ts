/**
 * Seeds replay iterations, and a chaos script gives a continuation exactly the calls that have no
 * committed response yet.
 */
import { describe, expect, it } from 'vitest'
import {
  type DataDirSnapshot,
  effectToken,
  iterationSeeds,
  makeRng,
  parseSeed,
  remainingSteps,
  scriptOf,
  tokenOfCall,
} from '../src/index.js'

describe('iterationSeeds', () => {
  describe('when a run is started from the seed of its iteration i', () => {
    it('its iterations are iterations i, i + 1, … of the original run', () => {
      const run = iterationSeeds(20261203, 10)
      expect(iterationSeeds(run[6] as number, 4)).toEqual(run.slice(6))
      expect(new Set(run).size).toBe(10)
      expect(run[0]).toBe(20261203)
    })
  })
})

describe('makeRng', () => {
  it('draws the same choices from the same seed, and others from another seed', () => {
    const draw = (seed: number) => {
      const rng = makeRng(seed)
      return Array.from({ length: 20 }, () => rng.int(0, 1000))
    }
    expect(draw(7)).toEqual(draw(7))
    expect(draw(7)).not.toEqual(draw(8))
    const rng = makeRng(1)
    for (let i = 0; i < 1000; i += 1) {
      const n = rng.int(2, 8)
      expect(n >= 2 && n <= 8 && Number.isInteger(n)).toBe(true)
    }
  })
})

describe('parseSeed', () => {
  it.for([
    ['0', 0],
    ['4294967295', 4294967295],
    ['0xff', 255],
    ['4294967296', null],
    ['-1', null],
    ['1.5', null],
    ['', null],
    ['seed', null],
  ] as const)('%s → %s', ([text, seed]) => {
    expect(parseSeed(text)).toBe(seed)
  })
})

describe('scriptOf and tokenOfCall', () => {
  it('puts each step’s token in its tool call, and only the chosen shell step kills its process', () => {
    const shell = { token: effectToken(9, 1), tool: 'shell' as const }
    const write = { token: effectToken(9, 2), tool: 'write_file' as const }
    const script = scriptOf([shell, write], shell.token) as ReadonlyArray<{
      readonly toolCall?: { readonly name: string; readonly args: Record<string, string> }
    }>
    expect(script).toHaveLength(3)
    expect(script[0]?.toolCall?.args['command']).toBe(`printf '%s\\n' ${shell.token} >> effects.log && kill -9 $PPID`)
    expect(script[1]?.toolCall?.args).toEqual({ path: `w/${write.token}`, content: `${write.token}\n` })
    expect(tokenOfCall('shell', script[0]?.toolCall?.args)).toBe(shell.token)
    expect(tokenOfCall('write_file', script[1]?.toolCall?.args)).toBe(write.token)
    expect(tokenOfCall('list_dir', { path: '.' })).toBeNull()
    expect(scriptOf([shell])[0]).toEqual({
      toolCall: { name: 'shell', args: { command: `printf '%s\\n' ${shell.token} >> effects.log` } },
    })
  })
})

describe('remainingSteps', () => {
  const steps = [1, 2, 3].map((k) => ({ token: effectToken(5, k), tool: 'shell' as const }))
  const ledger = (rows: ReadonlyArray<Record<string, unknown>>) =>
    Buffer.from(rows.map((r) => `${JSON.stringify(r)}\n`).join(''))
  const call = (id: string, token: string) => ({
    content: { kind: 'function_call', id, name: 'shell', args: { command: `printf '%s\\n' ${token} >> effects.log` } },
  })
  const response = (id: string) => ({ content: { kind: 'function_response', id, name: 'shell', result: {} } })

  it('drops answered calls in any run of the session, and keeps a call whose response never came', () => {
    const snapshot: DataDirSnapshot = {
      runs: new Map([
        [
          's/run-a',
          {
            sessionId: 's',
            runId: 'run-a',
            header: null,
            ledger: ledger([call('a-1', steps[0]?.token ?? ''), response('a-1'), call('a-2', steps[1]?.token ?? '')]),
          },
        ],
        [
          'other/run-b',
          {
            sessionId: 'other',
            runId: 'run-b',
            header: null,
            ledger: ledger([call('b-1', steps[2]?.token ?? ''), response('b-1')]),
          },
        ],
      ]),
      claims: new Map(),
    }
    expect(remainingSteps(steps, snapshot, 's').map((s) => s.token)).toEqual([steps[1]?.token, steps[2]?.token])
  })
})
