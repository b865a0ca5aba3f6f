/**
 * What the model sees of a tool result.
 */
import { describe, expect, it } from 'vitest'
import { mcpResultText } from '../src/index.js'

describe('mcpResultText', () => {
  it.each([
    {
      name: 'text parts, one per line',
      result: {
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      text: 'a\nb',
    },
    {
      name: 'an image by its size',
      result: { content: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] },
      text: '[image image/png, 3 bytes]',
    },
    {
      name: 'an embedded text resource',
      result: { content: [{ type: 'resource', resource: { uri: 'x:1', text: 'body' } }] },
      text: 'body',
    },
    {
      name: 'a resource link',
      result: { content: [{ type: 'resource_link', uri: 'file:///a', name: 'a' }] },
      text: '[resource link file:///a]',
    },
    { name: 'structured content as JSON', result: { content: [], structuredContent: { sum: 3 } }, text: '{"sum":3}' },
    {
      name: 'structured content its text mirrors as JSON',
      result: { content: [{ type: 'text', text: '{ "sum": 3 }' }], structuredContent: { sum: 3 } },
      text: '{ "sum": 3 }',
    },
    {
      name: 'structured content whose strings the text holds',
      result: { content: [{ type: 'text', text: 'hello\n' }], structuredContent: { content: 'hello\n' } },
      text: 'hello\n',
    },
    {
      name: 'structured content the text does not say',
      result: { content: [{ type: 'text', text: 'Result:' }], structuredContent: { temperature: 22 } },
      text: 'Result:\n{"temperature":22}',
    },
  ])('renders $name', ({ result, text }) => {
    expect(mcpResultText(result)).toBe(text)
  })
})
