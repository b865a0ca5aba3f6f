/**
 * The one table a host reads to show a code it was handed — a planner park reason or an executor
 * rejection, whichever stage refused — as the sentence a person reads. Hosts used to merge the two
 * tables themselves, each its own way; merged here, every host says the same thing for a code.
 */
import { ExecutionRejectionSentences } from './ExecutionRejection.js'
import { ParkReasonSentences, describeParkReason } from './ParkReason.js'

/**
 * Every park reason and execution rejection code with the sentence a person reads (the two tables
 * share no code).
 * @category models
 */
export const CodeSentences = { ...ParkReasonSentences, ...ExecutionRejectionSentences } as const

/**
 * A code of `CodeSentences`: a park reason or an execution rejection.
 * @category models
 */
export type SentencedCode = keyof typeof CodeSentences

/**
 * True when `code` has a sentence of its own in `CodeSentences`.
 * @category guards
 */
export const isSentencedCode = (code: string): code is SentencedCode => Object.hasOwn(CodeSentences, code)

/**
 * The human sentence for any park reason or execution rejection; an unknown code gets the generic
 * sentence of `describeParkReason`, so a host never shows a raw code alone.
 * @category constructors
 */
export const describeCode = (code: string): string =>
  isSentencedCode(code) ? CodeSentences[code] : describeParkReason(code)
