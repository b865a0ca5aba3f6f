/**
 * The catalog gate over tools that come from servers (MCP). A call records the digest of its tool's
 * declaration; a tool that is still offered under the same name but declared differently now (its
 * input schema or annotations changed, or it moved to another server) is not the tool the call ran:
 * for this boundary it counts as unavailable, exactly like a tool that is gone. Hosts and ledgers
 * without recorded sources are judged by name alone, as before.
 */
import type { HostFacts } from '../HostFacts.js'
import type { FoldedSegment } from '../walkAncestors.js'

/**
 * How one missing tool of a server is missing, for the plan's detail.
 * @category models
 */
export interface MissingServerTool {
  readonly toolName: string
  readonly server: string
  /** `changed`: offered under its name with another declaration; `server_unavailable`: its server did not start. */
  readonly change: 'absent' | 'changed' | 'server_unavailable'
  readonly serverReason?: string
}

/** `mcp__<server>__<tool>`: the server part of an MCP tool's name. */
const serverOfName = (name: string): string | undefined => /^mcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)__./.exec(name)?.[1]

/**
 * The names of tools a call of the chain recorded a source for, which the host offers now under
 * another server or declaration digest.
 * @category constructors
 */
export const changedToolNames = (
  segments: ReadonlyArray<FoldedSegment>,
  facts: Pick<HostFacts, 'availableToolNames' | 'toolCatalog'>,
): ReadonlySet<string> => {
  const available = new Set(facts.availableToolNames)
  const changed = new Set<string>()
  for (const { folded } of segments) {
    for (const recorded of folded.recordedToolSources) {
      if (!available.has(recorded.toolName)) continue
      const now = facts.toolCatalog?.[recorded.toolName]
      if (now === undefined || now.server !== recorded.server || now.digest !== recorded.digest) {
        changed.add(recorded.toolName)
      }
    }
  }
  return changed
}

/**
 * The host facts as this boundary may use them: tools whose declaration changed are left out of
 * `availableToolNames`. The same object when nothing changed.
 * @category constructors
 */
export const withoutChangedTools = <F extends Pick<HostFacts, 'availableToolNames' | 'toolCatalog'>>(
  facts: F,
  segments: ReadonlyArray<FoldedSegment>,
): F => {
  const changed = changedToolNames(segments, facts)
  return changed.size === 0
    ? facts
    : { ...facts, availableToolNames: facts.availableToolNames.filter((name) => !changed.has(name)) }
}

/**
 * For each missing tool that belongs to a server: which server, and whether it is gone, changed, or
 * its server did not start (with the server's reason).
 * @category constructors
 */
export const describeMissingServerTools = (
  missing: ReadonlyArray<string>,
  segments: ReadonlyArray<FoldedSegment>,
  facts: HostFacts,
): ReadonlyArray<MissingServerTool> => {
  const recorded = new Map<string, string>()
  for (const { folded } of segments) for (const r of folded.recordedToolSources) recorded.set(r.toolName, r.server)
  const changed = changedToolNames(segments, facts)
  return missing.flatMap((toolName): ReadonlyArray<MissingServerTool> => {
    const server = recorded.get(toolName) ?? facts.toolCatalog?.[toolName]?.server ?? serverOfName(toolName)
    if (server === undefined) return []
    if (changed.has(toolName)) return [{ toolName, server, change: 'changed' }]
    const down = facts.unavailableToolServers?.find((s) => s.server === server)
    return down === undefined
      ? [{ toolName, server, change: 'absent' }]
      : [{ toolName, server, change: 'server_unavailable', serverReason: down.reason }]
  })
}
