/**
 * What a tool call ran and printed, as the terminal shows it: one line per call, a few lines of
 * output, control characters neutralised.
 */
import { describe, expect, it } from 'vitest'
import { toolCallLine, toolOutputPreview } from '../src/toolActivity.js'

describe('toolCallLine', () => {
  it.each([
    ['shell', { command: 'ls   -la\n| wc -l' }, '$ ls -la | wc -l'],
    ['shell', { command: 'sleep 5', background: true }, '$ sleep 5 &'],
    ['shell', { command: 'printf "\u001b[31mred"' }, '$ printf " [31mred"'],
    ['read_file', { path: 'src/a.ts' }, 'src/a.ts'],
    ['list_dir', { path: '.' }, '.'],
    ['write_file', { path: 'notes.txt', content: 'héllo' }, 'notes.txt (6 bytes)'],
    ['shell', {}, null],
    ['mcp_tool', { path: 'x' }, null],
  ])('%s %j reads %j', (tool, args, line) => {
    expect(toolCallLine(tool, args)).toBe(line)
  })

  it('cuts a long command line', () => {
    const line = toolCallLine('shell', { command: `echo ${'x'.repeat(300)}` }) ?? ''
    expect(line).toHaveLength(120)
    expect(line.endsWith('…')).toBe(true)
  })
})

describe('toolOutputPreview', () => {
  it.each([
    ['a shell result', { exitCode: 0, signal: null, stdout: 'one\ntwo\n', stderr: '' }, ['one', 'two']],
    [
      'a failed command',
      { exitCode: 2, signal: null, stdout: '', stderr: 'no such file\n' },
      ['no such file', 'exit 2'],
    ],
    ['a file', 'line 1\r\nline 2\n', ['line 1', 'line 2']],
    ['a listing', ['a.txt', 'b'], ['a.txt', 'b']],
    ['a write', { path: 'n.txt', bytes: 3 }, ['wrote n.txt (3 bytes)']],
    ['a background command', { shellRunId: 's1', pid: 42 }, ['running in the background (pid 42)']],
    ['a refusal', { error: 'Permission denied.' }, ['Permission denied.']],
    ['nothing', '', []],
  ])('%s', (_what, result, lines) => {
    expect(toolOutputPreview(result)).toEqual(lines)
  })

  it('keeps the first lines and counts the rest', () => {
    expect(toolOutputPreview('1\n2\n3\n4\n5\n6\n7\n')).toEqual(['1', '2', '3', '4', '… 3 more lines'])
  })

  it('shows escape sequences and carriage returns as spaces', () => {
    expect(toolOutputPreview('\u001b[2Jcleared\rback')).toEqual([' [2Jcleared', 'back'])
  })
})
