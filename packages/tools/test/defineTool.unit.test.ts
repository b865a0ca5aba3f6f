import * as TE from 'fp-ts/lib/TaskEither.js'
import * as E from 'fp-ts/lib/Either.js'
import { describe, expect, it } from 'vitest'
import { defineTool, failureOutcome, type ToolContext, type ToolFailure } from '../src/index.js'

const context: ToolContext = {
  sessionId: 's',
  runId: 'r',
  cwd: '/',
  toolCallId: 'c',
  shellRuns: { record: () => TE.right(undefined) },
  processIdentity: { identify: () => Promise.resolve(null) },
}
const definition = { name: 'probe', description: 'probe', parameters: { type: 'object' }, mutates: false }

describe('defineTool', () => {
  describe('when the body succeeds', () => {
    it('returns its outcome unchanged', async () => {
      const tool = defineTool(definition, () => Promise.resolve(E.right({ result: { ok: 1 }, isError: false })))
      expect(await tool.run({}, context)).toEqual({ result: { ok: 1 }, isError: false })
    })
  })

  describe('when the body returns a failure', () => {
    it('answers with the failure sentence as an error outcome', async () => {
      const failure: ToolFailure = { _tag: 'InvalidArguments', tool: 'probe', message: 'probe needs "x".' }
      const tool = defineTool(definition, () => Promise.resolve(E.left(failure)))
      expect(await tool.run({}, context)).toEqual(failureOutcome(failure))
      expect(failureOutcome(failure)).toEqual({ result: 'probe needs "x".', isError: true })
    })
  })

  describe('when the body throws', () => {
    it('answers with one line and no stack instead of rejecting', async () => {
      const tool = defineTool(definition, () => Promise.reject(new Error('boom')))
      const outcome = await tool.run({}, context)
      expect(outcome).toEqual({ result: 'probe failed unexpectedly: boom', isError: true })
    })
  })
})
