/**
 * Starts the chat screen on the terminal and resolves when the user leaves (/quit or Ctrl+C).
 * Loaded only by `maka chat`, so no other command pays for ink or React. SIGINT and SIGTERM are
 * trapped for the screen's lifetime and handled like the Ctrl+C key: the running turn is cancelled
 * and the screen leaves with 130 (143) once its end is committed; a second one exits at once.
 */
import { render } from 'ink'
import type { ExitCode } from '../ExitCode.js'
import type { InterruptSignal } from '../interrupts.js'
import { type ChatBackendOptions, makeChatBackend } from './chatBackend.js'
import { ChatApp, type ChatControls, type ChatExit } from './ChatApp.js'

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
      if (how.line !== undefined) process.stderr.write(`${how.line}\n`)
      process.exit(how.code)
    },
  }
  const instance = render(<ChatApp backend={backend} controls={controls} />, { exitOnCtrlC: false })
  try {
    await instance.waitUntilExit()
  } finally {
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigterm)
  }
  if (left.line !== undefined) process.stderr.write(`${left.line}\n`)
  return left.code as ExitCode
}
