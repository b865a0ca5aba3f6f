/**
 * The chat's line editor (node:readline, headless): typed chunks with control characters, cursor
 * moves, Ctrl chords, the history and a paste that keeps its newlines.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { type LineEditor, makeLineEditor } from '../src/ui/lineEditor.js'

let editor: LineEditor

afterEach(() => editor.dispose())

describe('lineEditor', () => {
  describe('when a chunk of keys is typed', () => {
    it('applies each key in turn: DEL deletes, Enter submits, the rest stays on the line', () => {
      editor = makeLineEditor()
      expect(editor.type('secondd\u007f\rthi')).toEqual(['second'])
      expect(editor.state()).toEqual({ line: 'thi', cursor: 3 })
      expect(editor.type('rd\r')).toEqual(['third'])
      expect(editor.state()).toEqual({ line: '', cursor: 0 })
    })

    it('never lets Ctrl+C, Ctrl+D or Ctrl+Z reach readline', () => {
      editor = makeLineEditor()
      expect(editor.type('a\u0003b\u0004c\u001a')).toEqual([])
      expect(editor.state().line).toBe('abc')
    })
  })

  describe('when the cursor moves', () => {
    it('inserts and deletes where the cursor is', () => {
      editor = makeLineEditor()
      editor.type('helo wrld')
      for (let i = 0; i < 6; i += 1) editor.press('left')
      editor.type('l')
      editor.press('end')
      for (let i = 0; i < 3; i += 1) editor.press('left')
      editor.type('o')
      editor.press('home')
      editor.type('say ')
      expect(editor.state()).toEqual({ line: 'say hello world', cursor: 4 })
      editor.chord('e', 'ctrl')
      editor.press('backspace')
      expect(editor.state()).toEqual({ line: 'say hello worl', cursor: 14 })
    })

    it('Ctrl+U deletes left of the cursor, Ctrl+K right of it, Ctrl+W the word before it', () => {
      editor = makeLineEditor()
      editor.type('one two three')
      editor.chord('w', 'ctrl')
      expect(editor.state().line).toBe('one two ')
      editor.press('left')
      editor.press('left')
      editor.chord('k', 'ctrl')
      expect(editor.state().line).toBe('one tw')
      editor.chord('u', 'ctrl')
      expect(editor.state()).toEqual({ line: '', cursor: 0 })
    })
  })

  describe('when lines were submitted', () => {
    it('Up and Down walk them, newest first, without duplicates', () => {
      editor = makeLineEditor()
      editor.type('first\rsecond\rsecond\r')
      editor.press('up')
      expect(editor.state().line).toBe('second')
      editor.press('up')
      expect(editor.state().line).toBe('first')
      editor.press('down')
      expect(editor.state().line).toBe('second')
      expect(editor.submit()).toBe('second')
    })
  })

  describe('when text is pasted', () => {
    it('keeps its newlines in one line, submitted as one message', () => {
      editor = makeLineEditor()
      editor.type('see: ')
      editor.paste('line one\r\nline two\n\u001b[31mred')
      expect(editor.state().line).toBe('see: line one\nline two\n[31mred')
      expect(editor.submit()).toBe('see: line one\nline two\n[31mred')
      editor.press('up')
      expect(editor.state().line).toBe('see: line one\nline two\n[31mred')
    })
  })

  describe('when the line is cleared', () => {
    it('empties it wherever the cursor is', () => {
      editor = makeLineEditor()
      editor.type('abc def')
      editor.press('left')
      editor.press('left')
      editor.clear()
      expect(editor.state()).toEqual({ line: '', cursor: 0 })
    })
  })
})
