/**
 * The tools a host registers for a turn. Its `names()` are the tool catalog the host inspector
 * reports and the plan snapshots, so they come out sorted and unique: the same set of tools always
 * gives the same catalog, whatever order they were registered in. The catalog's recovery modes are a
 * safety fact as well (`recoveryModesOf`), so a tool whose declaration contradicts itself is refused
 * when it is registered: registering a tool is a programming act, and the mistake should surface at
 * start-up rather than as a call that silently can never be recovered.
 */
import { RecoveryMode } from '@maka/events'
import { hasReconcileProbe, recoveryModeOf } from './recoveryModeOf.js'
import type { Tool, ToolSource } from './Tool.js'

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
// errors
// -------------------------------------------------------------------------------------

/**
 * Why `makeToolRegistry` refused a tool, with the sentence a developer reads. Stable codes.
 * @category errors
 */
export const ToolRegistrationRefusalSentences = {
  /** A tool with `mutates` not `false` declares the static mode `replay_safe`: running it again is not free. */
  replay_safe_mutating_tool:
    'declares recovery "replay_safe" but mutates the world; a mutating tool cannot be replayed',
  /** A tool declares the static mode `reconcile` without a `reconcile` probe (both `basis` and `probe`). */
  reconcile_without_probe: 'declares recovery "reconcile" but has no reconcile probe (basis and probe)',
  /** A tool's static `recovery` is neither a function nor a known mode. */
  unknown_recovery_mode: 'declares a recovery that is not a known mode',
} as const

/**
 * A stable registration refusal code.
 * @category errors
 */
export type ToolRegistrationRefusal = keyof typeof ToolRegistrationRefusalSentences

/**
 * Thrown by `makeToolRegistry` for a tool whose static recovery declaration contradicts itself. It
 * names the tool, never anything a call carries.
 * @category errors
 */
export class ToolRegistrationError extends Error {
  override readonly name = 'ToolRegistrationError'
  constructor(
    readonly code: ToolRegistrationRefusal,
    readonly toolName: string,
  ) {
    super(`Tool "${toolName}" ${ToolRegistrationRefusalSentences[code]}.`)
  }
}

const refusalOf = (tool: Tool): ToolRegistrationRefusal | undefined => {
  const declared: unknown = tool.recovery
  // A declaration by args is judged call by call (`recoveryModeOf`).
  if (declared === undefined || typeof declared === 'function') return undefined
  if (!RecoveryMode.is(declared)) return 'unknown_recovery_mode'
  if (declared === 'replay_safe' && tool.mutates !== false) return 'replay_safe_mutating_tool'
  if (declared === 'reconcile' && !hasReconcileProbe(tool)) return 'reconcile_without_probe'
  return undefined
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Builds a registry; when two tools share a name the later one wins, so a host can replace a built-in.
 * Throws `ToolRegistrationError` for any given tool (replaced or not) whose static `recovery` is
 * `replay_safe` while it mutates, `reconcile` without a `reconcile` probe, or not a known mode.
 * @category constructors
 */
export const makeToolRegistry = (tools: ReadonlyArray<Tool>): ToolRegistry => {
  const byName = new Map<string, Tool>()
  for (const tool of tools) {
    const refusal = refusalOf(tool)
    if (refusal !== undefined) throw new ToolRegistrationError(refusal, tool.name)
    byName.set(tool.name, tool)
  }
  const names = [...byName.keys()].sort(byCodeUnit)
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

const isRegistry = (tools: ReadonlyArray<Tool> | ToolRegistry): tools is ToolRegistry => !Array.isArray(tools)

/**
 * The catalog's recovery modes, as a plan snapshots them (`safetySnapshot.toolRecoveryModes`): tool
 * name → its static mode after the catalog's rules (`recoveryModeOf`), or `'by_args'` for a tool that
 * declares its mode by a function of the args. Keys are inserted sorted by code unit (a name that is
 * an array index still comes first in a JavaScript object); for a list, the later of two tools of one
 * name wins, as in `makeToolRegistry`.
 * @category constructors
 */
export const recoveryModesOf = (
  tools: ReadonlyArray<Tool> | ToolRegistry,
): Readonly<Record<string, RecoveryMode | 'by_args'>> => {
  const byName = new Map<string, Tool>()
  if (isRegistry(tools)) {
    for (const name of tools.names()) {
      const tool = tools.get(name)
      if (tool !== undefined) byName.set(name, tool)
    }
  } else {
    for (const tool of tools) byName.set(tool.name, tool)
  }
  // fromEntries, not assignment: a tool named `__proto__` must become a key, not a prototype.
  return Object.freeze(
    Object.fromEntries(
      [...byName.keys()].sort(byCodeUnit).map((name): readonly [string, RecoveryMode | 'by_args'] => {
        const tool = byName.get(name) as Tool
        return [name, typeof tool.recovery === 'function' ? 'by_args' : recoveryModeOf(tool, undefined)]
      }),
    ),
  )
}

/**
 * The catalog's sources: tool name → the server and declaration digest of every tool that has a
 * `source` (an MCP tool), sorted by name; built-in tools are left out, so a host without MCP tools
 * gives an empty record. Host facts carry it (`toolCatalog`) for the catalog gate.
 * @category constructors
 */
export const toolCatalogOf = (tools: ReadonlyArray<Tool> | ToolRegistry): Readonly<Record<string, ToolSource>> => {
  const byName = new Map<string, ToolSource>()
  const list = isRegistry(tools) ? tools.names().flatMap((name) => tools.get(name) ?? []) : tools
  for (const tool of list) {
    if (tool.source === undefined) byName.delete(tool.name)
    else byName.set(tool.name, { server: tool.source.server, digest: tool.source.digest })
  }
  return Object.freeze(
    Object.fromEntries([...byName.keys()].sort(byCodeUnit).map((name) => [name, byName.get(name) as ToolSource])),
  )
}
