/**
 * `maka recover [--json]`: the startup recovery pass over every session without a live owner,
 * reporting each repair. A data directory that does not exist yet is left uncreated. Exit 0, or 1
 * when a repair could not be written (one stderr line naming the write).
 */
import type { RecoveryAction } from '@maka/executor'
import { composeRuntime } from '../composeRuntime.js'
import { ExitCode } from '../ExitCode.js'
import type { GlobalFlags, JsonFlag } from '../CommandFlags.js'
import { providerForRuns } from '../providerChoice.js'
import { recoveryLine } from '../reportLines.js'
import { requireRecoveryWritten } from '../writeFailure.js'
import { openDataDir, say, sayJson } from './commandContext.js'

/**
 * Runs the recovery pass.
 * @category constructors
 */
export const recover = async (flags: JsonFlag, globals: GlobalFlags): Promise<ExitCode> => {
  const { dataDir, filesDir, stores, verbose } = await openDataDir(globals, 'read', 'async')
  let actions: ReadonlyArray<RecoveryAction> = []
  if (dataDir.exists) {
    const { runtime } = composeRuntime({
      dataDir: dataDir.path,
      filesDir,
      stores,
      // Recovery never calls a model; the provider is only there to complete the composition.
      providerFor: providerForRuns({ kind: 'scripted', steps: [] }, { turn: [], continuation: [] }),
      safeBoundaryResumeEnabled: false,
      permissionMode: 'deny',
      verbose,
    })
    actions = (await runtime.recover()).actions
  }
  if (flags.json === true) {
    sayJson({ dataDir: dataDir.path, actions })
  } else {
    if (actions.length === 0) say('Recovery: nothing to repair.')
    else say(`Recovery: ${actions.length} action${actions.length === 1 ? '' : 's'}.`)
    for (const action of actions) say(`- ${recoveryLine(action)}`)
  }
  requireRecoveryWritten(actions)
  return ExitCode.ok
}
