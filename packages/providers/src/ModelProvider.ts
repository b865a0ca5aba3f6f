/**
 * The provider port: one streaming call per model step. The executor speaks only this interface, so
 * the scripted model and a real OpenAI-compatible endpoint go through exactly the same loop.
 */
import { FailureClass } from '@maka/events'

/**
 * One message of provider history, already materialized from RuntimeEvents.
 * @category models
 */
export type ProviderMessage =
  | { readonly role: 'user'; readonly text: string }
  | {
      readonly role: 'assistant'
      readonly text: string
      readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: unknown }>
    }
  | {
      readonly role: 'tool'
      readonly toolCallId: string
      readonly name: string
      readonly result: unknown
      readonly isError: boolean
    }

/**
 * A tool as a provider sees it: name, description and a JSON Schema for its arguments.
 * @category models
 */
export interface ToolSpec {
  readonly name: string
  readonly description: string
  readonly parameters: Readonly<Record<string, unknown>>
}

/**
 * One model step's request.
 * @category models
 */
export interface ProviderRequest {
  readonly systemPrompt: string
  readonly messages: ReadonlyArray<ProviderMessage>
  readonly tools: ReadonlyArray<ToolSpec>
  readonly signal?: AbortSignal
}

/**
 * What a provider streams back during one step. A step ends when the iterable ends; it asked for
 * tools when it yielded `tool_call` chunks.
 * @category models
 */
export type ProviderChunk =
  | { readonly type: 'text_delta'; readonly text: string }
  | { readonly type: 'tool_call'; readonly id: string; readonly name: string; readonly args: unknown }
  | { readonly type: 'usage'; readonly input: number; readonly output: number }
  /** The step failed: always the stream's last chunk. */
  | { readonly type: 'failed'; readonly failure: ProviderFailure }

/**
 * A model behind one streaming call per step. A step that fails — an HTTP error, a timeout, a broken
 * stream, an abort, a scripted error — ends its stream with one `failed` chunk; the stream itself
 * never throws for an expected failure, so a throw out of `stream` is a bug.
 * @category models
 */
export interface ModelProvider {
  readonly providerId: string
  readonly modelId: string
  /** The endpoint a remote provider talks to (recorded in the run header so a resume can reach it again). */
  readonly baseUrl?: string
  /** How the run loop tries a failed step again (`RetryPolicy.ts`); none: never. */
  readonly retry?: RetryPolicy
  stream(request: ProviderRequest): AsyncIterable<ProviderChunk>
}

/**
 * How a provider's failed steps are tried again. `maxAttempts` counts every try of one step (1: never
 * again); `maxWaitMs` bounds all the waits of one step together; one computed wait is at most
 * `maxDelayMs`.
 * @category models
 */
export interface RetryPolicy {
  readonly maxAttempts: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  readonly maxWaitMs: number
}

/**
 * Why a provider step failed, as a stable class (never the prompt or the response body).
 * @category models
 */
export type ProviderErrorCode =
  | 'http_error'
  | 'stream_error'
  | 'scripted_error'
  | 'timeout'
  | 'aborted'
  | 'bad_response'
  | 'unreachable'
  | 'connection_lost'

/**
 * A provider step failed, as a value. `code` and `status` are safe to log; `message` never holds
 * prompt text or a response body.
 * @category errors
 */
export interface ProviderFailure {
  readonly _tag: 'ProviderFailure'
  readonly code: ProviderErrorCode
  readonly message: string
  readonly status?: number
  /** How long the endpoint asked to wait before the next try (its `Retry-After`), in ms. */
  readonly retryAfterMs?: number
}

/**
 * Builds a `ProviderFailure`.
 * @category constructors
 */
export const providerFailure = (
  code: ProviderErrorCode,
  message: string,
  status?: number,
  retryAfterMs?: number,
): ProviderFailure => ({
  _tag: 'ProviderFailure',
  code,
  message,
  ...(status === undefined ? {} : { status }),
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
})

/**
 * The failure class a failed provider step ends its run with (the `failureClass` of the terminal event).
 * @category constructors
 */
export const failureClassOfProviderFailure = (error: ProviderFailure): FailureClass => {
  switch (error.code) {
    case 'http_error':
      return error.status === 401 || error.status === 403
        ? FailureClass.provider_auth_error
        : FailureClass.provider_http_error
    case 'unreachable':
      return FailureClass.provider_unreachable
    case 'connection_lost':
      return FailureClass.provider_connection_lost
    case 'timeout':
      return FailureClass.provider_timeout
    case 'bad_response':
      return FailureClass.provider_protocol_error
    case 'stream_error':
    case 'scripted_error':
    case 'aborted':
      return FailureClass.provider_error
  }
}
