/**
 * The tools a host registers for a turn. Its `names()` are the tool catalog the host inspector
 * reports and the plan snapshots, so they come out sorted and unique: the same set of tools always
 * gives the same catalog, whatever order they were registered in.
 */
import type { Tool } from './Tool.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * What a provider is told about one tool.
 * @category models
 */
export interface ToolSpec {
  readonly name: string
  readonly description: string
  readonly parameters: Readonly<Record<string, unknown>>
}

/**
 * A lookup of tools by name.
 * @category models
 */
export interface ToolRegistry {
  /** Registered tool names, sorted by code unit, each once. */
  names(): ReadonlyArray<string>
  get(name: string): Tool | undefined
  /** One spec per name, in `names()` order. */
  specs(): ReadonlyArray<ToolSpec>
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * Builds a registry; when two tools share a name the later one wins, so a host can replace a built-in.
 * @category constructors
 */
export const makeToolRegistry = (tools: ReadonlyArray<Tool>): ToolRegistry => {
  const byName = new Map<string, Tool>()
  for (const tool of tools) byName.set(tool.name, tool)
  const names = [...byName.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const specs = names.map((name) => {
    const tool = byName.get(name) as Tool
    return { name: tool.name, description: tool.description, parameters: tool.parameters }
  })
  return {
    names: () => names,
    get: (name) => byName.get(name),
    specs: () => specs,
  }
}
