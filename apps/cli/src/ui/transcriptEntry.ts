/**
 * What the chat's transcript is made of: the lines the screen shows and the notices among them. Its own
 * module, so the backend that makes entries and the components that draw them share the types without
 * importing each other.
 */

/**
 * A line the screen shows, with how it should look.
 * @category models
 */
export interface Notice {
  readonly tone: 'info' | 'ok' | 'warn' | 'error'
  readonly text: string
}

/**
 * A transcript entry.
 * @category models
 */
export type TranscriptEntry =
  | { readonly kind: 'banner'; readonly text: string }
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'model'; readonly text: string }
  | {
      readonly kind: 'tool'
      readonly text: string
      readonly failed: boolean
      /** What the call runs: the shell command line, the path (terminal only). */
      readonly detail?: string
      /** The first lines of the call's output (terminal only). */
      readonly preview?: ReadonlyArray<string>
    }
  | { readonly kind: 'notice'; readonly notice: Notice }
