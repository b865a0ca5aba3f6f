/**
 * One finished line of the chat transcript: a user prompt, a model answer, tool activity or a
 * notice from the host.
 */
import { Box, Text, useStdout } from 'ink'
import wrapAnsi from 'wrap-ansi'
import type { TranscriptEntry } from './transcriptEntry.js'

export type { TranscriptEntry } from './transcriptEntry.js'

const toneColor = { info: 'gray', ok: 'green', warn: 'yellow', error: 'red' } as const

/**
 * Wraps text at word boundaries to `width` columns (a word longer than a row is cut), keeping each
 * line's indentation on its continuation rows. Ink's own wrapping keeps the space it breaks at, so a
 * row could be one column too wide and the terminal would then break it mid-word.
 * @category combinators
 */
export const wrapWords = (text: string, width: number): string =>
  text
    .split('\n')
    .map((line) => {
      const indent = /^[ \t]*/.exec(line)?.[0] ?? ''
      const rows = wrapAnsi(line.slice(indent.length), Math.max(8, width - indent.length), { hard: true, trim: true })
      return rows
        .split('\n')
        .map((row) => `${indent}${row}`)
        .join('\n')
    })
    .join('\n')

/**
 * A prompt or an answer: its speaker, then its text wrapped at word boundaries beside it.
 * @category constructors
 */
export const Said = ({
  who,
  color,
  text,
}: {
  readonly who: string
  readonly color: 'blue' | 'magenta'
  readonly text: string
}) => {
  const { stdout } = useStdout()
  const columns = stdout.columns > 0 ? stdout.columns : 80
  const prefix = who.length + 1
  return (
    <Box>
      <Box flexShrink={0} width={prefix}>
        <Text color={color} bold>
          {who}
        </Text>
      </Box>
      <Text>{wrapWords(text, columns - prefix)}</Text>
    </Box>
  )
}

/**
 * Renders one entry.
 * @category constructors
 */
export const TranscriptItem = ({ entry }: { readonly entry: TranscriptEntry }) => {
  switch (entry.kind) {
    case 'banner':
      return <Text bold>{entry.text}</Text>
    case 'user':
      return <Said who="you ›" color="blue" text={entry.text} />
    case 'model':
      return <Said who="maka ›" color="magenta" text={entry.text} />
    case 'tool':
      return (
        <Box flexDirection="column">
          <Text color={entry.failed ? 'red' : 'cyan'}>
            {`  ${entry.text}`}
            {entry.detail === undefined ? '' : <Text dimColor>{`  ${entry.detail}`}</Text>}
          </Text>
          {(entry.preview ?? []).map((line, i) => (
            <Text key={i} dimColor wrap="truncate-end">{`    │ ${line}`}</Text>
          ))}
        </Box>
      )
    case 'notice':
      return <Text color={toneColor[entry.notice.tone]}>{entry.notice.text}</Text>
  }
}
