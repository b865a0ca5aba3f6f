/**
 * Which session `resume` and `resume plan` work on: `--session`, else the most recent one (by its
 * `createdAt`, then its id). An unknown session or an empty data directory is bad input.
 */
import { BadInputError } from '../ExitCode.js'
import { requireSession } from '../hostInput.js'
import * as E from 'fp-ts/lib/Either.js'
import { findMostRecentSession } from '../sessionCatalog.js'
import type { Workspace } from './commandContext.js'

/**
 * The session id to resume or plan.
 * @category constructors
 */
export const pickSession = async (workspace: Workspace, sessionFlag: string | undefined): Promise<string> => {
  if (sessionFlag !== undefined) {
    await requireSession(workspace.stores, workspace.dataDir, sessionFlag)
    return sessionFlag
  }
  const found = workspace.dataDir.exists ? await findMostRecentSession(workspace.stores) : E.right(undefined)
  if (E.isLeft(found)) {
    throw new BadInputError(
      `The sessions of the data directory ${workspace.dataDir.path} cannot be listed (${found.left}).`,
    )
  }
  const latest = found.right
  if (latest === undefined) throw new BadInputError(`There is no session in ${workspace.dataDir.path}.`)
  return latest
}
