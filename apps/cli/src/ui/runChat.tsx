/**
 * Starts the chat screen on the terminal and resolves when the user leaves (/exit, /quit, Ctrl+D,
 * Ctrl+C on an empty idle line). The terminal's bracketed paste is on while the screen is, so a
 * pasted block of lines reaches the screen as one paste (sent as one message), not as typed Enters.
 * Loaded only by `maka chat`, so no other command pays for ink or React. SIGINT and SIGTERM are
 * trapped for the screen's lifetime and handled like the Ctrl+C key: the running turn is cancelled
 * and the screen leaves with 130 (143) once its end is committed; a second one exits at once.
 */
import { render } from 'ink'
import type { ExitCode } from '../ExitCode.js'
import type { InterruptSignal } from '../interrupts.js'
import { type ChatBackendOptions, makeChatBackend } from './chatBackend.js'
import { ChatApp, type ChatControls, type ChatExit } from './ChatApp.js'

// xterm's bracketed paste mode (DEC private mode 2004): a paste arrives between ESC[200~ and ESC[201~.
const BRACKETED_PASTE_ON = '\u001b[?2004h'
const BRACKETED_PASTE_OFF = '\u001b[?2004l'

/**
 * Runs the TUI until it exits.
 * @category constructors
 */
export const runChat = async (options: ChatBackendOptions): Promise<ExitCode> => {
  const backend = makeChatBackend(options)
  let left: ChatExit = { code: 0 }
  const listeners = new Set<(signal: InterruptSignal) => void>()
  const onSigint = () => listeners.forEach((l) => l('SIGINT'))
  const onSigterm = () => listeners.forEach((l) => l('SIGTERM'))
  // Installed before ink renders, so no default handler kills the process on the first signal.
  process.on('SIGINT', onSigint)
  process.on('SIGTERM', onSigterm)
  const controls: ChatControls = {
    onSignal: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    onLeave: (how) => {
      left = how
    },
    exitNow: (how) => {
      instance.unmount()
      process.stdout.write(BRACKETED_PASTE_OFF)
      if (how.line !== undefined) process.stderr.write(`${how.line}\n`)
      process.exit(how.code)
    },
  }
  const instance = render(<ChatApp backend={backend} controls={controls} />, { exitOnCtrlC: false })
  process.stdout.write(BRACKETED_PASTE_ON)
  try {
    await instance.waitUntilExit()
  } finally {
    process.stdout.write(BRACKETED_PASTE_OFF)
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigterm)
  }
  if (left.line !== undefined) process.stderr.write(`${left.line}\n`)
  return left.code as ExitCode
}
