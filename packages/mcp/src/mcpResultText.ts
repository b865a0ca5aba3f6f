/**
 * What the model sees of an MCP tool result: its content as text, one part per line, with
 * structured content as JSON. Binary parts (images, audio, blobs) are named with their size, never
 * inlined: a model given base64 learns nothing and the ledger grows by megabytes.
 */

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u)

const str = (u: unknown): string => (typeof u === 'string' ? u : '')

const base64Bytes = (data: string): number =>
  Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0)

const partText = (part: unknown): string => {
  if (!isRecord(part)) return ''
  switch (part['type']) {
    case 'text':
      return str(part['text'])
    case 'image':
    case 'audio':
      return `[${String(part['type'])} ${str(part['mimeType'])}, ${base64Bytes(str(part['data']))} bytes]`
    case 'resource': {
      const resource = isRecord(part['resource']) ? part['resource'] : {}
      if (typeof resource['text'] === 'string') return resource['text']
      return `[resource ${str(resource['uri'])}${typeof resource['blob'] === 'string' ? `, ${base64Bytes(resource['blob'])} bytes` : ''}]`
    }
    case 'resource_link':
      return `[resource link ${str(part['uri'])}]`
    default:
      return `[${String(part['type'])} content]`
  }
}

// The text parts already say what the structured content holds: they are its JSON, or it is an
// object of strings each of which a text part holds (servers that put their text under a key).
const mirrors = (parts: ReadonlyArray<string>, structured: unknown): boolean => {
  const json = JSON.stringify(structured)
  const isJson = (part: string) => {
    try {
      return JSON.stringify(JSON.parse(part)) === json
    } catch {
      return false
    }
  }
  if (parts.some(isJson)) return true
  if (!isRecord(structured)) return false
  const values = Object.values(structured)
  const text = parts.join('\n')
  return values.length > 0 && values.every((v) => typeof v === 'string' && text.includes(v))
}

/**
 * The text of a `CallToolResult`: every content part on its own line, then the structured content as
 * JSON unless the text parts already say it.
 * @category constructors
 */
export const mcpResultText = (result: { readonly content?: unknown; readonly structuredContent?: unknown }): string => {
  const parts = Array.isArray(result.content) ? result.content.map(partText) : []
  if (result.structuredContent !== undefined && !mirrors(parts, result.structuredContent)) {
    parts.push(JSON.stringify(result.structuredContent))
  }
  return parts.join('\n')
}
