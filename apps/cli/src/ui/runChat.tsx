/**
 * Starts the chat screen on the terminal and resolves when the user leaves (/quit or Ctrl+C).
 * Loaded only by `maka chat`, so no other command pays for ink or React.
 */
import { render } from 'ink'
import { ExitCode } from '../ExitCode.js'
import { type ChatBackendOptions, makeChatBackend } from './chatBackend.js'
import { ChatApp } from './ChatApp.js'

/**
 * Runs the TUI until it exits.
 * @category constructors
 */
export const runChat = async (options: ChatBackendOptions): Promise<ExitCode> => {
  const backend = makeChatBackend(options)
  const instance = render(<ChatApp backend={backend} />, { exitOnCtrlC: true })
  await instance.waitUntilExit()
  return ExitCode.ok
}
