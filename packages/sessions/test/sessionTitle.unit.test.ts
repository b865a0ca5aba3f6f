import { describe, expect, it } from 'vitest'
import { sessionTitleOf } from '../src/sessionTitle.js'

describe('sessionTitleOf', () => {
  describe('when the prompt is short', () => {
    it('is the prompt on one line', () => {
      expect(sessionTitleOf('  list the files\n\nand  write notes ')).toBe('list the files and write notes')
    })
  })
  describe('when the prompt is long', () => {
    it('is cut at a word, at most 60 characters with the ellipsis', () => {
      const title = sessionTitleOf(`${'refactor the payment module '.repeat(5)}please`)
      expect(title.length).toBeLessThanOrEqual(60)
      expect(title.endsWith('…')).toBe(true)
      expect(title).toBe('refactor the payment module refactor the payment module…')
    })
  })
})
