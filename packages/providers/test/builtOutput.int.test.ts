import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url))

describe('built output', () => {
  describe('when imported by plain node (no vitest, no tsx)', () => {
    // vitest resolves imports that plain node rejects (e.g. 'fp-ts/Either', or the CommonJS `openai`
    // seen from ESM); only node itself proves the build.
    it('loads, decodes the demo script and runs the scripted model', async () => {
      expect(existsSync(dist), `run the build first: ${dist} is missing`).toBe(true)
      const script = `
        const m = await import(${JSON.stringify(dist)})
        const decoded = m.decodeScript(JSON.parse(JSON.stringify(m.DEMO_SCRIPT)))
        const provider = m.makeScriptedProvider({ steps: decoded.right, toolCallIdPrefix: 'run' })
        const first = []
        for await (const c of provider.stream({ systemPrompt: '', messages: [], tools: [] })) first.push(c)
        const openai = m.makeOpenAICompatibleProvider({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm' })
        console.log(JSON.stringify({ tag: decoded._tag, first: first[0], openai: openai.providerId }))
      `
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])
      expect(JSON.parse(stdout)).toEqual({
        tag: 'Right',
        first: { type: 'tool_call', id: 'run-1', name: 'list_dir', args: { path: '.' } },
        openai: 'openai-compatible',
      })
    })
  })
})
