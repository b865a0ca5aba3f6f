import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { DEMO_SCRIPT, decodeScript, parseScript } from '../src/index.js'

const leftOf = (result: E.Either<string, unknown>): string => {
  if (E.isRight(result)) throw new Error('expected a Left')
  return result.left
}

describe('ScriptStep', () => {
  describe('when a script uses the four step kinds', () => {
    it('decodes them unchanged', () => {
      const script = [
        { delayMs: 0 },
        { toolCall: { name: 'list_dir', args: { path: '.' } } },
        { toolCall: { name: 'list_dir' } },
        { error: 'rate limited' },
        { text: 'Done.' },
      ]
      expect(decodeScript(script)).toEqual(E.right(script))
    })

    it('accepts an empty script', () => {
      expect(decodeScript([])).toEqual(E.right([]))
    })

    it('accepts the built-in demo script', () => {
      expect(decodeScript(JSON.parse(JSON.stringify(DEMO_SCRIPT)))).toEqual(E.right(DEMO_SCRIPT))
    })
  })

  describe('when a script is malformed', () => {
    it.each([
      { given: { text: 'hi' }, sentence: 'A script must be a JSON array of steps, such as [{"text": "Hello"}].' },
      {
        given: [{ text: 'ok' }, 'hello'],
        sentence: 'Script step 2 must be an object with one of the keys "text", "toolCall", "delayMs" or "error".',
      },
      {
        given: [{ say: 'hi' }],
        sentence:
          'Script step 1 has the unknown key "say"; a step has exactly one of the keys "text", "toolCall", "delayMs" or "error".',
      },
      {
        given: [{}],
        sentence: 'Script step 1 is empty; it needs one of the keys "text", "toolCall", "delayMs" or "error".',
      },
      {
        given: [{ text: 'a', error: 'b' }],
        sentence: 'Script step 1 has the keys "text" and "error"; a step has exactly one.',
      },
      {
        given: [{ text: 'a', extra: 1 }],
        sentence: 'Script step 1 is invalid: extra: unknown key "extra" in TextStep.',
      },
      { given: [{ text: 42 }], sentence: 'Script step 1 is invalid: text: expected string, got a number.' },
      {
        given: [{ toolCall: { name: '' } }],
        sentence: 'Script step 1 is invalid: toolCall.name: must be a non-empty string.',
      },
      {
        given: [{ toolCall: { name: 'x', arguments: {} } }],
        sentence: 'Script step 1 is invalid: toolCall.arguments: unknown key "arguments" in toolCall.',
      },
      {
        given: [{ toolCall: { name: 'x', args: [1] } }],
        sentence: 'Script step 1 is invalid: toolCall.args: must be a JSON object.',
      },
      {
        given: [{ delayMs: -5 }],
        sentence: 'Script step 1 is invalid: delayMs: must be a whole number of milliseconds, 0 or more.',
      },
      {
        given: [{ delayMs: 1.5 }],
        sentence: 'Script step 1 is invalid: delayMs: must be a whole number of milliseconds, 0 or more.',
      },
    ])('rejects $given with one sentence', ({ given, sentence }) => {
      expect(leftOf(decodeScript(given))).toBe(sentence)
    })
  })

  describe('when parsing script text', () => {
    it('parses and decodes valid JSON', () => {
      expect(parseScript('[{"text": "hi"}]')).toEqual(E.right([{ text: 'hi' }]))
    })

    it('rejects invalid JSON without quoting the file', () => {
      const sentence = leftOf(parseScript('[{"text": "secret prompt"'))
      expect(sentence).toBe('The script is not valid JSON.')
    })
  })
})
