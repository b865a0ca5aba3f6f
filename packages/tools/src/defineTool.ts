/**
 * The edge every built-in tool runs behind. A tool body returns `Either<ToolFailure, ToolOutcome>`;
 * this turns the failure side into an error outcome and catches anything thrown, because the
 * executor must always be able to append a `function_response` for a committed `function_call`.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { Tool, ToolContext, ToolOutcome } from './Tool.js'
import { failureOutcome, unexpected, type ToolFailure } from './ToolFailure.js'

/**
 * A tool's static description: everything but `run`.
 * @category models
 */
export type ToolDefinition = Omit<Tool, 'run'>

/**
 * Builds a `Tool` whose `run` never rejects.
 * @category constructors
 */
export const defineTool = (
  definition: ToolDefinition,
  body: (args: unknown, context: ToolContext) => Promise<E.Either<ToolFailure, ToolOutcome>>,
): Tool => ({
  ...definition,
  run: async (args, context) => {
    try {
      return E.getOrElse(failureOutcome)(await body(args, context))
    } catch (cause) {
      return failureOutcome(unexpected(definition.name, cause))
    }
  },
})
