/**
 * Which session `resume` and `resume plan` work on: `--session`, else the most recent one (by its
 * `createdAt`, then its id). An unknown session or an empty data directory is bad input.
 */
import { BadInputError } from '../ExitCode.js'
import { requireSession } from '../hostInput.js'
import { mostRecentSessionId } from '../sessionCatalog.js'
import type { Workspace } from './commandContext.js'
import { readSummaries } from './sessions.js'

/**
 * The session id to resume or plan.
 * @category constructors
 */
export const pickSession = async (workspace: Workspace, sessionFlag: string | undefined): Promise<string> => {
  if (sessionFlag !== undefined) {
    await requireSession(workspace.stores, workspace.dataDir, sessionFlag)
    return sessionFlag
  }
  const latest = mostRecentSessionId(await readSummaries(workspace))
  if (latest === undefined) throw new BadInputError(`There is no session in ${workspace.dataDir.path}.`)
  return latest
}
