import { describe, expect, it } from 'vitest'
import { builtinTools, makeToolRegistry, type Tool } from '../src/index.js'

const fakeTool = (name: string, description = `${name} tool`): Tool => ({
  name,
  description,
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  mutates: false,
  run: () => Promise.resolve({ result: name, isError: false }),
})

describe('makeToolRegistry', () => {
  describe('when tools are registered in any order, some twice', () => {
    const registry = makeToolRegistry([fakeTool('zeta'), fakeTool('alpha'), fakeTool('Beta'), fakeTool('alpha', 'v2')])

    it('lists each name once, sorted by code unit', () => {
      expect(registry.names()).toEqual(['Beta', 'alpha', 'zeta'])
    })

    it('lets the later registration win', () => {
      expect(registry.get('alpha')?.description).toBe('v2')
      expect(registry.specs().find((spec) => spec.name === 'alpha')?.description).toBe('v2')
    })

    it('returns undefined for an unknown name', () => {
      expect(registry.get('nope')).toBeUndefined()
    })

    it('gives one spec per name in names() order', () => {
      expect(registry.specs().map((spec) => spec.name)).toEqual(registry.names())
    })
  })

  describe('when built from the built-in tools', () => {
    const registry = makeToolRegistry(builtinTools())

    it('holds the four built-ins', () => {
      expect(registry.names()).toEqual(['list_dir', 'read_file', 'shell', 'write_file'])
    })

    it('marks only the world-changing tools as mutating', () => {
      expect(Object.fromEntries(builtinTools().map((tool) => [tool.name, tool.mutates]))).toEqual({
        read_file: false,
        write_file: true,
        list_dir: false,
        shell: true,
      })
    })

    it('describes every tool with an object JSON Schema whose required keys are declared', () => {
      for (const spec of registry.specs()) {
        expect(spec.description.length, spec.name).toBeGreaterThan(0)
        expect(spec.parameters, spec.name).toMatchObject({ type: 'object', additionalProperties: false })
        const properties = spec.parameters['properties'] as Record<string, { type: string }>
        const required = (spec.parameters['required'] ?? []) as ReadonlyArray<string>
        for (const key of required) expect(properties[key], `${spec.name}.${key}`).toBeDefined()
        for (const [key, schema] of Object.entries(properties)) {
          expect(['string', 'boolean', 'integer'], `${spec.name}.${key}`).toContain(schema.type)
        }
        expect(JSON.parse(JSON.stringify(spec))).toEqual(spec)
      }
    })

    it('declares the arguments each tool needs', () => {
      const required = Object.fromEntries(registry.specs().map((spec) => [spec.name, spec.parameters['required']]))
      expect(required).toEqual({
        list_dir: undefined,
        read_file: ['path'],
        shell: ['command'],
        write_file: ['path', 'content'],
      })
    })
  })
})
