import { describe, expect, it } from 'vitest'
import { makeShellTool, makeWriteFileTool } from '../src/index.js'

describe('describeCall', () => {
  describe('when write_file is asked for permission', () => {
    it('names the path and the size', () => {
      expect(makeWriteFileTool().describeCall?.({ path: 'notes/a.txt', content: 'héllo' })).toBe(
        'write notes/a.txt (6 bytes)',
      )
    })

    it('gives nothing for arguments it cannot read', () => {
      expect(makeWriteFileTool().describeCall?.(null)).toBeUndefined()
      expect(makeWriteFileTool().describeCall?.({ path: 3 })).toBeUndefined()
    })
  })

  describe('when shell is asked for permission', () => {
    it('shows the command line, and says when it runs in the background', () => {
      const shell = makeShellTool()
      expect(shell.describeCall?.({ command: 'ls -la' })).toBe('run "ls -la"')
      expect(shell.describeCall?.({ command: 'sleep 5', background: true })).toBe('run "sleep 5" in the background')
      expect(shell.describeCall?.({ command: '' })).toBeUndefined()
    })
  })
})
