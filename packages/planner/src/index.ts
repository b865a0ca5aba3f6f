/**
 * @maka/planner — the continuation planner (work in progress).
 */
export type { HostFacts, WorkspaceCheckpoint, UnsettledOperation } from './HostFacts.js'
