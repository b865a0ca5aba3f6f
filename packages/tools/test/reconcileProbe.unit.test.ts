import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import {
  BasisRefusalSentences,
  computeReconcileBasis,
  RECONCILE_LIMIT_MS,
  runProbe,
  type ProbeContext,
  type ProbeVerdict,
  type ReconcileProbe,
  type Tool,
} from '../src/index.js'

const context: ProbeContext = { cwd: '/nowhere', sessionId: 'session-1' }
// Only the outcome is asserted, never the elapsed time: a small limit just keeps the suite quick.
const SMALL_LIMIT_MS = 20

const givenReconcileTool = (reconcile: Partial<ReconcileProbe>): Tool => ({
  name: 'custom',
  description: 'custom tool',
  parameters: { type: 'object' },
  mutates: true,
  recovery: 'reconcile',
  reconcile: {
    basis: () => Promise.resolve('basis'),
    probe: () => Promise.resolve({ verdict: 'not_applied' }),
    ...reconcile,
  },
  run: () => Promise.resolve({ result: 'ran', isError: false }),
})

const basisOf = (basis: ReconcileProbe['basis'], limitMs?: number) =>
  computeReconcileBasis(givenReconcileTool({ basis }), { a: 1 }, context, limitMs)

type AnyProbe = (args: unknown, ctx: ProbeContext, basis: string) => Promise<unknown>

// A probe written in JavaScript may answer anything; the cast lets these tests answer it too.
const probeOf = (probe: AnyProbe, limitMs?: number) =>
  runProbe(
    givenReconcileTool({ probe: probe as (args: unknown, ctx: ProbeContext, basis: string) => Promise<ProbeVerdict> }),
    { a: 1 },
    context,
    'basis',
    limitMs,
  )

const never = <A>(): Promise<A> => new Promise<A>(() => undefined)

describe('computeReconcileBasis', () => {
  it('defaults its limit to 10 s', () => {
    expect(RECONCILE_LIMIT_MS).toBe(10_000)
  })

  describe('when the basis answers a string of at most 256 bytes', () => {
    it('is Right with it, and the basis saw the args, the cwd, the session and a live signal', async () => {
      const seen: Array<unknown> = []
      const basis = 'é'.repeat(128) // 256 bytes
      const result = await basisOf((args, ctx) => {
        seen.push(args, Object.keys(ctx).sort(), ctx.cwd, ctx.sessionId, ctx.signal?.aborted)
        return Promise.resolve(basis)
      })
      expect(result).toEqual(E.right(basis))
      expect(seen).toEqual([{ a: 1 }, ['cwd', 'sessionId', 'signal'], '/nowhere', 'session-1', false])
    })
  })

  describe('when the basis is longer than 256 UTF-8 bytes', () => {
    it('is Left basis_too_large, however few characters it has', async () => {
      const result = await basisOf(() => Promise.resolve(`${'é'.repeat(128)}x`))
      expect(result).toEqual(
        E.left({ _tag: 'BasisRefusal', code: 'basis_too_large', message: BasisRefusalSentences.basis_too_large }),
      )
    })
  })

  describe('when the basis fails', () => {
    it.each<[string, ReconcileProbe['basis']]>([
      ['rejects', () => Promise.reject(new Error('/secret/path could not be read'))],
      [
        'throws before answering',
        () => {
          throw new Error('boom')
        },
      ],
      ['answers a number', () => Promise.resolve(42 as unknown as string)],
      ['answers nothing', () => Promise.resolve(undefined as unknown as string)],
    ])('is Left basis_failed when it %s, with a sentence that holds nothing of the call', async (_, basis) => {
      const result = await basisOf(basis)
      expect(result).toEqual(
        E.left({ _tag: 'BasisRefusal', code: 'basis_failed', message: BasisRefusalSentences.basis_failed }),
      )
    })

    it('is Left basis_failed for a tool without a probe', async () => {
      const tool: Tool = { ...givenReconcileTool({}), recovery: 'never_auto_retry' }
      const { reconcile: _, ...withoutProbe } = tool
      expect(await computeReconcileBasis(withoutProbe, {}, context)).toEqual(
        E.left(expect.objectContaining({ code: 'basis_failed' })),
      )
    })
  })

  describe('when the basis never answers', () => {
    it('is Left basis_timeout, with its signal aborted, without waiting for it', async () => {
      let signal: AbortSignal | undefined
      const result = await basisOf((_, ctx) => {
        signal = ctx.signal
        return never()
      }, SMALL_LIMIT_MS)
      expect(result).toEqual(
        E.left({ _tag: 'BasisRefusal', code: 'basis_timeout', message: BasisRefusalSentences.basis_timeout }),
      )
      expect(signal?.aborted).toBe(true)
    })

    it('swallows the rejection a basis gives when its signal aborts', async () => {
      const result = await basisOf(
        (_, ctx) =>
          new Promise((_resolve, reject) => ctx.signal?.addEventListener('abort', () => reject(new Error('aborted')))),
        SMALL_LIMIT_MS,
      )
      expect(result).toEqual(E.left(expect.objectContaining({ code: 'basis_timeout' })))
    })
  })

  describe('when the caller’s own signal aborts', () => {
    it('aborts the basis’s signal too', async () => {
      const caller = new AbortController()
      const result = computeReconcileBasis(
        givenReconcileTool({
          basis: (_, ctx) =>
            new Promise((_resolve, reject) => ctx.signal?.addEventListener('abort', () => reject(new Error('stop')))),
        }),
        {},
        { ...context, signal: caller.signal },
      )
      caller.abort()
      expect(await result).toEqual(E.left(expect.objectContaining({ code: 'basis_failed' })))
    })
  })
})

describe('runProbe', () => {
  describe('when the probe answers a well-formed verdict', () => {
    it.each<ProbeVerdict>([{ verdict: 'not_applied' }, { verdict: 'diverged' }, { verdict: 'unreadable' }])(
      'gives %o back',
      async (verdict) => {
        expect(await probeOf(() => Promise.resolve(verdict))).toEqual(verdict)
      },
    )

    it('gives applied with its output as JSON carries it, and drops extra keys', async () => {
      const answer = { verdict: 'applied', output: { path: 'a.txt', bytes: 3, dropped: undefined }, extra: true }
      expect(await probeOf(() => Promise.resolve(answer))).toEqual({
        verdict: 'applied',
        output: { path: 'a.txt', bytes: 3 },
      })
      expect(await probeOf(() => Promise.resolve({ verdict: 'diverged', why: 'x' }))).toStrictEqual({
        verdict: 'diverged',
      })
    })

    it('passes the recorded basis and the call args', async () => {
      const seen: Array<unknown> = []
      await probeOf((args, ctx, basis) => {
        seen.push(args, basis, Object.keys(ctx).sort())
        return Promise.resolve({ verdict: 'not_applied' })
      })
      expect(seen).toEqual([{ a: 1 }, 'basis', ['cwd', 'sessionId', 'signal']])
    })
  })

  describe('when the answer is malformed', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    it.each<[string, unknown]>([
      ['null', null],
      ['a string', 'applied'],
      ['no verdict', {}],
      ['an unknown verdict', { verdict: 'maybe' }],
      ['applied without output', { verdict: 'applied' }],
      ['applied with an undefined output', { verdict: 'applied', output: undefined }],
      ['applied with a function', { verdict: 'applied', output: () => 1 }],
      ['applied with a bigint', { verdict: 'applied', output: 1n }],
      ['applied with a cycle', { verdict: 'applied', output: cyclic }],
      [
        'a throwing getter',
        {
          get verdict(): string {
            throw new Error('boom')
          },
        },
      ],
    ])('is unreadable for %s', async (_, answer) => {
      expect(await probeOf(() => Promise.resolve(answer))).toEqual({ verdict: 'unreadable' })
    })
  })

  describe('when the probe fails or never answers', () => {
    it('is unreadable when it rejects or throws', async () => {
      expect(await probeOf(() => Promise.reject(new Error('no')))).toEqual({ verdict: 'unreadable' })
      expect(
        await probeOf(() => {
          throw new Error('no')
        }),
      ).toEqual({ verdict: 'unreadable' })
    })

    it('is unreadable on time-out, with its signal aborted, without waiting for it', async () => {
      let signal: AbortSignal | undefined
      const verdict = await probeOf((_, ctx) => {
        signal = ctx.signal
        return never()
      }, SMALL_LIMIT_MS)
      expect(verdict).toEqual({ verdict: 'unreadable' })
      expect(signal?.aborted).toBe(true)
    })

    it('is unreadable for a tool without a probe', async () => {
      const { reconcile: _, ...withoutProbe } = givenReconcileTool({})
      expect(await runProbe(withoutProbe, {}, context, 'basis')).toEqual({ verdict: 'unreadable' })
    })
  })
})
