/**
 * One finished line of the chat transcript: a user prompt, a model answer, tool activity or a
 * notice from the host.
 */
import { Box, Text } from 'ink'
import type { Notice } from './chatBackend.js'

/**
 * A transcript entry.
 * @category models
 */
export type TranscriptEntry =
  | { readonly kind: 'banner'; readonly text: string }
  | { readonly kind: 'user'; readonly text: string }
  | { readonly kind: 'model'; readonly text: string }
  | { readonly kind: 'tool'; readonly text: string; readonly failed: boolean }
  | { readonly kind: 'notice'; readonly notice: Notice }

const toneColor = { info: 'gray', ok: 'green', warn: 'yellow', error: 'red' } as const

/**
 * Renders one entry.
 * @category constructors
 */
export const TranscriptItem = ({ entry }: { readonly entry: TranscriptEntry }) => {
  switch (entry.kind) {
    case 'banner':
      return <Text bold>{entry.text}</Text>
    case 'user':
      return (
        <Box>
          <Text color="blue" bold>
            {'you › '}
          </Text>
          <Text>{entry.text}</Text>
        </Box>
      )
    case 'model':
      return (
        <Box>
          <Text color="magenta" bold>
            {'maka › '}
          </Text>
          <Text>{entry.text}</Text>
        </Box>
      )
    case 'tool':
      return <Text color={entry.failed ? 'red' : 'cyan'}>{`  ${entry.text}`}</Text>
    case 'notice':
      return <Text color={toneColor[entry.notice.tone]}>{entry.notice.text}</Text>
  }
}
