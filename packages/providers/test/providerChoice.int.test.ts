/**
 * `providerChoiceForResume` (and `continuationProviderResolver`, the same rule as the runtime's port): a continuation keeps the model its source run recorded, and flags that
 * pick another model get one readable note. A script file for a scripted run is that model's input,
 * not another model: no note (it once read "… instead of the recorded the scripted model.").
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AgentRun } from '@maka/events'
import * as E from 'fp-ts/lib/Either.js'
import type * as TE from 'fp-ts/lib/TaskEither.js'
import { continuationProviderResolver, providerChoiceForResume } from '../src/index.js'

const URL_A = 'http://127.0.0.1:8080/v1'
const env = { MAKA_API_KEY: 'test-key' }

// Only the provider fields are read; the rest of the header is irrelevant here.
const header = (fields: {
  readonly providerId: string
  readonly modelId: string
  readonly providerBaseUrl?: string
}): AgentRun => ({ ...fields }) as unknown as AgentRun

const scripted = header({ providerId: 'scripted', modelId: 'scripted' })
const endpoint = header({ providerId: 'openai-compatible', modelId: 'm', providerBaseUrl: URL_A })

let dir: string
let script: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'maka-provider-choice-'))
  script = join(dir, 'script.json')
  await writeFile(script, JSON.stringify([{ text: 'hi' }]))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

// The cases here all resolve; a refusal is a Left (see the resolver's cases below).
const resolvedRight = async <A>(task: TE.TaskEither<{ readonly message: string }, A>): Promise<A> => {
  const result = await task()
  if (result._tag === 'Left') throw new Error(result.left.message)
  return result.right
}

describe('providerChoiceForResume', () => {
  describe('when a scripted run is resumed with a script file', () => {
    it('uses the script and notes nothing: it is the same model', async () => {
      const resolved = await resolvedRight(providerChoiceForResume(scripted, { script }, env))
      expect(resolved.choice).toEqual({ kind: 'scripted', steps: [{ text: 'hi' }] })
      expect(resolved.note).toBeUndefined()
    })
  })

  describe('when a run is resumed without provider flags', () => {
    it.each([
      ['scripted', scripted],
      ['openai-compatible', endpoint],
    ])('keeps the recorded %s model and notes nothing', async (_name, source) => {
      expect((await resolvedRight(providerChoiceForResume(source, {}, env))).note).toBeUndefined()
    })
  })

  describe('when the flags pick another model', () => {
    it.each([
      [
        'an endpoint model over a scripted run',
        scripted,
        { provider: 'openai-compatible', baseUrl: URL_A, model: 'x' },
        `Resuming with openai-compatible model x at ${URL_A} from the flags instead of the recorded scripted model.`,
      ],
      [
        'another model of the same endpoint',
        endpoint,
        { model: 'other' },
        `Resuming with openai-compatible model other at ${URL_A} from the flags instead of the recorded openai-compatible model m at ${URL_A}.`,
      ],
      [
        'the scripted model over an endpoint run',
        endpoint,
        { provider: 'scripted' },
        `Resuming with the scripted model from the flags instead of the recorded openai-compatible model m at ${URL_A}.`,
      ],
    ])('says so in one sentence: %s', async (_name, source, flags, note) => {
      expect((await resolvedRight(providerChoiceForResume(source, flags, env))).note).toBe(note)
    })
  })
})

describe('continuationProviderResolver', () => {
  const resolve = continuationProviderResolver({}, { turn: [], continuation: [{ text: 'default' }] }, env)

  describe('when the recorded model can be built', () => {
    it('answers a fresh provider per run of that model, with the note of the choice', async () => {
      const resolved = await continuationProviderResolver(
        { provider: 'scripted' },
        { turn: [], continuation: [] },
        env,
      )({
        source: endpoint,
      })
      expect(E.isRight(resolved) && resolved.right.note).toBe(
        `Resuming with the scripted model from the flags instead of the recorded openai-compatible model m at ${URL_A}.`,
      )
      const provider = E.isRight(resolved) ? resolved.right.providerFor({ kind: 'continuation', runId: 'r-1' }) : null
      expect(provider?.providerId).toBe('scripted')
      expect(E.isRight(await resolve({ source: scripted }))).toBe(true)
    })
  })

  describe('when the recorded model cannot be built here', () => {
    it('answers the refusal sentence as a Left instead of throwing', async () => {
      const unknown = header({ providerId: 'elsewhere', modelId: 'x' })
      expect(await resolve({ source: unknown })).toEqual(
        E.left({
          message:
            'The interrupted run used elsewhere model x, which cannot be built here; pass --provider and its flags to choose a model.',
        }),
      )
    })
  })
})
