/**
 * What a line typed into the chat means: a prompt for the model, or a slash command with its
 * arguments. Pure, so the TUI's command rules are tested without a terminal. The line itself is
 * edited by `lineEditor`.
 */

/**
 * The slash commands of the TUI.
 * @category models
 */
export const SLASH_COMMANDS = ['/resume', '/plan', '/sessions', '/help', '/quit', '/exit'] as const

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
  /** `/resume list`: the interrupted sessions to pick from, whatever this session holds (decision 240). */
  | { readonly _tag: 'ResumeList' }
  /** A known command given arguments it does not take: print its usage. */
  | { readonly _tag: 'Usage'; readonly usage: string }
  | { readonly _tag: 'Unknown'; readonly name: string }

const isSlashCommand = (name: string): name is SlashCommand => (SLASH_COMMANDS as ReadonlyArray<string>).includes(name)

/**
 * Parses one submitted line. No command takes arguments but `/resume list`.
 * @category constructors
 */
export const parseChatInput = (line: string): ChatInput => {
  const text = line.trim()
  if (text === '') return { _tag: 'Empty' }
  if (!text.startsWith('/')) return { _tag: 'Prompt', text }
  const [name = '', ...rest] = text.split(/\s+/)
  if (!isSlashCommand(name)) return { _tag: 'Unknown', name }
  if (name === '/resume' && rest.length === 1 && rest[0] === 'list') return { _tag: 'ResumeList' }
  return rest.length > 0 ? { _tag: 'Usage', usage: `Usage: ${name}` } : { _tag: 'Command', name }
}

/**
 * The lines `/help` prints.
 * @category models
 */
export const HELP_LINES: ReadonlyArray<string> = [
  'Type a prompt and press Enter to run a turn.',
  '/resume    continue the interrupted turn from its latest safe boundary (no new prompt is sent);',
  '           when this session has none and others do, list them to pick one by number (Esc: none)',
  '/resume list  list the interrupted sessions of this data directory to pick one by number',
  '/plan      show what /resume would do, without doing it',
  '/sessions  list the sessions of this data directory',
  '/help      this help',
  '/exit      leave (also /quit, Ctrl+D on an empty line, Ctrl+C on an empty idle line)',
  'Keys: Esc or Ctrl+C cancel a running turn (the chat stays open); Ctrl+C clears the line;',
  '  Up/Down walk the input history; Left/Right, Home/End, Ctrl+A/E move; Ctrl+U, Ctrl+K, Ctrl+W delete;',
  '  a pasted block of lines is sent as one message.',
]
