/**
 * What a line typed into the chat means: a prompt for the model, or a slash command with its
 * arguments. Pure, so the TUI's command rules are tested without a terminal.
 */

/**
 * The slash commands of the TUI.
 * @category models
 */
export const SLASH_COMMANDS = ['/resume', '/plan', '/sessions', '/help', '/quit'] as const

/**
 * A slash command name.
 * @category models
 */
export type SlashCommand = (typeof SLASH_COMMANDS)[number]

/**
 * A parsed input line.
 * @category models
 */
export type ChatInput =
  | { readonly _tag: 'Empty' }
  | { readonly _tag: 'Prompt'; readonly text: string }
  | { readonly _tag: 'Command'; readonly name: SlashCommand }
  /** A known command given arguments it does not take: print its usage. */
  | { readonly _tag: 'Usage'; readonly usage: string }
  | { readonly _tag: 'Unknown'; readonly name: string }

const isSlashCommand = (name: string): name is SlashCommand => (SLASH_COMMANDS as ReadonlyArray<string>).includes(name)

/**
 * Parses one submitted line. No command takes arguments.
 * @category constructors
 */
export const parseChatInput = (line: string): ChatInput => {
  const text = line.trim()
  if (text === '') return { _tag: 'Empty' }
  if (!text.startsWith('/')) return { _tag: 'Prompt', text }
  const [name = '', ...rest] = text.split(/\s+/)
  if (!isSlashCommand(name)) return { _tag: 'Unknown', name }
  return rest.length > 0 ? { _tag: 'Usage', usage: `Usage: ${name}` } : { _tag: 'Command', name }
}

/**
 * The lines `/help` prints.
 * @category models
 */
export const HELP_LINES: ReadonlyArray<string> = [
  'Type a prompt and press Enter to run a turn.',
  '/resume    continue the interrupted turn from its latest safe boundary (no new prompt is sent)',
  '/plan      show what /resume would do, without doing it',
  '/sessions  list the sessions of this data directory',
  '/help      this help',
  '/quit      leave (Ctrl+C too; during a turn Ctrl+C cancels it and leaves)',
]

/**
 * Applies a chunk of typed keys to the line being edited: a backspace (DEL or BS) deletes the last
 * character, Enter finishes a line (several in a pasted chunk), other control characters are
 * dropped so they never reach a prompt. Returns the line still being edited and the finished ones,
 * in order.
 * @category constructors
 */
export const applyTyped = (
  current: string,
  typed: string,
): { readonly line: string; readonly submitted: ReadonlyArray<string> } => {
  const submitted: Array<string> = []
  let line = [...current]
  let afterCr = false
  for (const ch of typed) {
    if (ch === '\n' && afterCr) {
      afterCr = false
      continue
    }
    afterCr = ch === '\r'
    if (ch === '\r' || ch === '\n') {
      submitted.push(line.join(''))
      line = []
    } else if (ch === '\u007f' || ch === '\b') {
      line.pop()
    } else if (ch >= ' ') {
      line.push(ch)
    }
  }
  return { line: line.join(''), submitted }
}
