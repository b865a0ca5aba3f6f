/**
 * What a line typed into the chat means: a prompt for the model, or a slash command with its
 * arguments. Pure, so the TUI's command rules are tested without a terminal. The line itself is
 * edited by `lineEditor`.
 */
import { type OperatorVerdict, isOperatorVerdict } from '@maka/events'

/**
 * The slash commands of the TUI.
 * @category models
 */
export const SLASH_COMMANDS = ['/resume', '/resolve', '/plan', '/sessions', '/help', '/quit', '/exit'] as const

/**
 * A slash command name.
 * @category models
 */
export type SlashCommand = (typeof SLASH_COMMANDS)[number]

/**
 * Which open tool call `/resolve` names: by its tool call id, or by its operation id.
 * @category models
 */
export type ResolveTarget = { readonly callId: string } | { readonly operationId: string }

/**
 * The usage line of `/resolve`.
 * @category models
 */
export const RESOLVE_USAGE =
  'Usage: /resolve [<toolCallId> | --operation <operationId>] applied|not_applied|failed [text]'

/**
 * A parsed input line.
 * @category models
 */
export type ChatInput =
  | { readonly _tag: 'Empty' }
  | { readonly _tag: 'Prompt'; readonly text: string }
  | { readonly _tag: 'Command'; readonly name: Exclude<SlashCommand, '/resolve'> }
  /** `/resolve` alone: the open tool calls of this session, with the verdicts a person may record. */
  | { readonly _tag: 'ResolveList' }
  /** `/resolve <target> <verdict> [text]`: record what happened to one open tool call. */
  | {
      readonly _tag: 'Resolve'
      readonly target: ResolveTarget
      readonly verdict: OperatorVerdict
      readonly output?: string
    }
  /** `/resume list`: the interrupted sessions to pick from, whatever this session holds (decision 240). */
  | { readonly _tag: 'ResumeList' }
  /** A known command given arguments it does not take: print its usage. */
  | { readonly _tag: 'Usage'; readonly usage: string }
  | { readonly _tag: 'Unknown'; readonly name: string }

const isSlashCommand = (name: string): name is SlashCommand => (SLASH_COMMANDS as ReadonlyArray<string>).includes(name)

// The text after the verdict is kept as typed (inner spaces and all), only trimmed.
const RESOLVE_LINE = /^\/resolve\s+(--operation\s+)?(\S+)\s+(\S+)(?:\s+([\s\S]*))?$/

const parseResolve = (text: string): ChatInput => {
  const matched = RESOLVE_LINE.exec(text)
  const [, byOperation, id = '', verdict = '', output = ''] = matched ?? []
  if (matched === null || id.startsWith('--') || !isOperatorVerdict(verdict)) {
    return { _tag: 'Usage', usage: RESOLVE_USAGE }
  }
  return {
    _tag: 'Resolve',
    target: byOperation === undefined ? { callId: id } : { operationId: id },
    verdict,
    ...(output.trim() === '' ? {} : { output: output.trim() }),
  }
}

/**
 * Parses one submitted line. No command takes arguments but `/resume list` and `/resolve`.
 * @category constructors
 */
export const parseChatInput = (line: string): ChatInput => {
  const text = line.trim()
  if (text === '') return { _tag: 'Empty' }
  if (!text.startsWith('/')) return { _tag: 'Prompt', text }
  const [name = '', ...rest] = text.split(/\s+/)
  if (!isSlashCommand(name)) return { _tag: 'Unknown', name }
  if (name === '/resume' && rest.length === 1 && rest[0] === 'list') return { _tag: 'ResumeList' }
  if (name === '/resolve') return rest.length === 0 ? { _tag: 'ResolveList' } : parseResolve(text)
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
  '/resolve   list the tool calls the interrupted turn left open, with what each answer would mean;',
  '/resolve <toolCallId> applied|not_applied|failed [text]  record what happened to one (nothing is run);',
  '           --operation <operationId> in place of the call id when it names several; /resume then continues',
  '/plan      show what /resume would do, without doing it',
  '/sessions  list the sessions of this data directory',
  '/help      this help',
  '/exit      leave (also /quit, Ctrl+D on an empty line, Ctrl+C on an empty idle line)',
  'Keys: Esc or Ctrl+C cancel a running turn or stop waiting for a command (the chat stays open); Ctrl+C clears the line;',
  '  Up/Down walk the input history; Left/Right, Home/End, Ctrl+A/E move; Ctrl+U, Ctrl+K, Ctrl+W delete;',
  '  a pasted block of lines is sent as one message.',
]
