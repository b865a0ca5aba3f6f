/**
 * What a tool call did, for the person at the terminal: one line saying what ran (the shell command
 * line, the file path) and a few lines of what it printed or returned. These lines carry tool
 * arguments and results, so only the terminal renderings of `run` (text mode) and `chat` use them —
 * never `--json`, `show`, the verbose lifecycle log, a ledger or telemetry, which keep
 * `eventSummary`'s names-and-outcomes-only lines.
 */

/**
 * How many lines of a tool's output the preview keeps, and how wide each may be.
 * @category models
 */
export const PREVIEW_LIMITS = { lines: 4, width: 120 } as const

const cut = (text: string, width: number): string => (text.length > width ? `${text.slice(0, width - 1)}…` : text)

// Control characters (escape sequences a command printed, carriage returns) would move the
// terminal's cursor: they are shown as spaces.
// eslint-disable-next-line no-control-regex
const printable = (text: string): string => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, ' ')

const field = (args: unknown, name: string): string | undefined => {
  if (typeof args !== 'object' || args === null) return undefined
  const value = (args as Record<string, unknown>)[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * The one line that says what a call runs: `$ ls -la` for `shell`, the path for the file tools;
 * null when the arguments name nothing to show.
 * @category constructors
 */
export const toolCallLine = (toolName: string, args: unknown): string | null => {
  switch (toolName) {
    case 'shell': {
      const command = field(args, 'command')
      if (command === undefined) return null
      const background = typeof args === 'object' && args !== null && (args as Record<string, unknown>)['background']
      return cut(
        `$ ${printable(command).replace(/\s+/g, ' ').trim()}${background === true ? ' &' : ''}`,
        PREVIEW_LIMITS.width,
      )
    }
    case 'read_file':
    case 'write_file':
    case 'list_dir': {
      const path = field(args, 'path')
      if (path === undefined) return null
      const content = field(args, 'content')
      const size = toolName === 'write_file' && content !== undefined ? ` (${Buffer.byteLength(content)} bytes)` : ''
      return cut(`${printable(path)}${size}`, PREVIEW_LIMITS.width)
    }
    default:
      return null
  }
}

const linesOf = (text: string): ReadonlyArray<string> => {
  const lines = text.split('\n')
  while (lines.length > 0 && lines[lines.length - 1]?.trim() === '') lines.pop()
  return lines
}

const outputText = (result: unknown): string => {
  if (typeof result === 'string') return result
  if (Array.isArray(result))
    return result.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))).join('\n')
  if (typeof result === 'object' && result !== null) {
    const record = result as Record<string, unknown>
    const stdout = typeof record['stdout'] === 'string' ? record['stdout'] : undefined
    const stderr = typeof record['stderr'] === 'string' ? record['stderr'] : undefined
    if (stdout !== undefined || stderr !== undefined) {
      const exit =
        typeof record['exitCode'] === 'number' && record['exitCode'] !== 0 ? `exit ${record['exitCode']}` : ''
      return [stdout ?? '', stderr ?? '', exit]
        .map((part) => part.trimEnd())
        .filter((part) => part !== '')
        .join('\n')
    }
    if (typeof record['path'] === 'string' && typeof record['bytes'] === 'number') {
      return `wrote ${record['path']} (${record['bytes']} bytes)`
    }
    if (typeof record['shellRunId'] === 'string' && typeof record['pid'] === 'number') {
      return `running in the background (pid ${record['pid']})`
    }
    const error = record['error']
    if (typeof error === 'string') return error
    if (
      typeof error === 'object' &&
      error !== null &&
      typeof (error as Record<string, unknown>)['message'] === 'string'
    ) {
      return String((error as Record<string, unknown>)['message'])
    }
    return JSON.stringify(result)
  }
  return typeof result === 'number' || typeof result === 'boolean' ? String(result) : ''
}

/**
 * The first lines of what a call returned (a shell command's stdout then stderr, a file's text, a
 * listing's names), each cut to the preview width, with a last line counting the lines left out.
 * @category constructors
 */
export const toolOutputPreview = (result: unknown): ReadonlyArray<string> => {
  const lines = linesOf(printable(outputText(result).replace(/\r\n?/g, '\n')).replace(/\t/g, '  '))
  const shown = lines.slice(0, PREVIEW_LIMITS.lines).map((line) => cut(line.trimEnd(), PREVIEW_LIMITS.width))
  const rest = lines.length - shown.length
  return rest > 0 ? [...shown, `… ${rest} more line${rest === 1 ? '' : 's'}`] : shown
}
