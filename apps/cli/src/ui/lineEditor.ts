/**
 * The chat's input line, edited by Node's own line editor (`node:readline`, the one behind the Node
 * REPL) instead of one written here (decision 215): cursor movement, Home/End, word moves, Ctrl+U,
 * Ctrl+K, Ctrl+W, Ctrl+A/E and a history that Up/Down walk. readline runs headless over a stream of
 * its own: the screen hands it the keys ink parsed, reads back its line and cursor, and renders them.
 * A bracketed paste is inserted whole, newlines kept, so it is sent as one message.
 */
import { EventEmitter } from 'node:events'
import { type Interface, createInterface } from 'node:readline'
import { Writable } from 'node:stream'

/**
 * The keys the editor takes by name (ink reports both Backspace and Delete as a delete).
 * @category models
 */
export type EditorKey = 'left' | 'right' | 'up' | 'down' | 'home' | 'end' | 'backspace'

/**
 * The line being edited, with the cursor's offset in it (in UTF-16 units, as readline keeps it).
 * @category models
 */
export interface EditorState {
  readonly line: string
  readonly cursor: number
}

/**
 * A headless line editor.
 * @category models
 */
export interface LineEditor {
  readonly state: () => EditorState
  /** Typed text, key by key: control characters edit (DEL deletes, Ctrl+U clears left), Enter submits. Returns the lines submitted. */
  readonly type: (text: string) => ReadonlyArray<string>
  /** A named key. */
  readonly press: (key: EditorKey, modifiers?: { readonly ctrl?: boolean; readonly meta?: boolean }) => void
  /** Ctrl or Alt with a letter (Ctrl+U, Alt+B…). */
  readonly chord: (letter: string, modifier: 'ctrl' | 'meta') => void
  /** Enter: the line is submitted (and kept in the history when it is not blank). */
  readonly submit: () => string
  /** Pasted text, inserted at the cursor as it is: its newlines stay in the line. */
  readonly paste: (text: string) => void
  /** Empties the line (the history stays). */
  readonly clear: () => void
  readonly dispose: () => void
}

// A pasted newline is kept in readline's line as this private-use character (readline would take a
// newline for Enter) and given back as a newline.
const PASTED_NEWLINE = '\uE000'

const CTRL_ONLY_FOR_THE_SCREEN = new Set(['c', 'd', 'z'])

/**
 * A fresh editor with an empty history of up to `historySize` lines.
 * @category constructors
 */
export const makeLineEditor = (options: { readonly historySize?: number } = {}): LineEditor => {
  // readline reads keys from an input it decodes itself and draws on an output: here an emitter fed
  // one character at a time (synchronously decoded) and an output that draws nothing.
  const input = Object.assign(new EventEmitter(), { resume: () => input, pause: () => input, isTTY: true })
  const output = new Writable({
    write: (_chunk, _encoding, done) => {
      done()
    },
  })
  const rl: Interface = createInterface({
    input: input as unknown as NodeJS.ReadableStream,
    output,
    terminal: true,
    prompt: '',
    historySize: options.historySize ?? 200,
    removeHistoryDuplicates: true,
  })
  // The screen owns Ctrl+C, Ctrl+D and Ctrl+Z: readline must never close or suspend the process.
  rl.on('SIGINT', () => undefined)
  rl.on('SIGTSTP', () => undefined)
  rl.on('SIGCONT', () => undefined)
  let submitted: Array<string> = []
  rl.on('line', (line) => {
    submitted.push(line.split(PASTED_NEWLINE).join('\n'))
  })
  const internal = rl as unknown as { line: string; cursor: number }
  const collect = (): ReadonlyArray<string> => {
    const lines = submitted
    submitted = []
    return lines
  }
  const feed = (text: string) => {
    // One character at a time: readline inserts a multi-character chunk at the wrong place when the
    // cursor is not at the end of the line.
    for (const ch of text) input.emit('data', ch)
  }
  return {
    state: () => ({ line: internal.line.split(PASTED_NEWLINE).join('\n'), cursor: internal.cursor }),
    type: (text) => {
      // Ctrl+C, Ctrl+D and Ctrl+Z inside a chunk would close or suspend readline; the screen handles them.
      // eslint-disable-next-line no-control-regex
      feed(text.replace(/[\u0003\u0004\u001a]/g, '').replace(/\r?\n/g, '\r'))
      return collect()
    },
    press: (key, modifiers = {}) => {
      rl.write(null, {
        name: key,
        ctrl: modifiers.ctrl === true,
        meta: modifiers.meta === true,
        shift: false,
      })
    },
    chord: (letter, modifier) => {
      const name = letter.toLowerCase()
      if (!/^[a-z]$/.test(name) || (modifier === 'ctrl' && CTRL_ONLY_FOR_THE_SCREEN.has(name))) return
      rl.write(null, { name, ctrl: modifier === 'ctrl', meta: modifier === 'meta', shift: false })
      // Ctrl+J and Ctrl+M are Enter to readline; the screen submits through `submit` instead.
      collect()
    },
    submit: () => {
      rl.write(null, { name: 'return', ctrl: false, meta: false, shift: false })
      return collect().join('\n')
    },
    paste: (text) => {
      // eslint-disable-next-line no-control-regex
      const clean = text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
      feed(clean.replace(/\n/g, PASTED_NEWLINE))
    },
    clear: () => {
      rl.write(null, { name: 'u', ctrl: true, meta: false, shift: false })
      rl.write(null, { name: 'k', ctrl: true, meta: false, shift: false })
    },
    dispose: () => {
      rl.close()
    },
  }
}
