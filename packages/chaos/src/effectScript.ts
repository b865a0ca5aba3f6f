/**
 * The scripted turns of `maka chaos`: tool calls whose side effects can be counted. Each step
 * carries a token unique in its iteration; a `shell` step appends the token as one line to
 * `effects.log`, a `write_file` step creates `w/<token>`. A continuation gets the steps whose calls
 * have no committed response yet — as a real model would ask again for a call it saw no answer to —
 * so a boundary continued when it must not be shows up as a side effect counted twice.
 */
import { asObject, committedRows } from './committedRows.js'
import { type DataDirSnapshot, SHELL_EFFECTS_FILE, WRITE_EFFECTS_DIR } from './DataDirSnapshot.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * One tool call of a chaos script.
 * @category models
 */
export interface EffectStep {
  readonly token: string
  readonly tool: 'shell' | 'write_file'
}

const TOKEN = /chaos-[0-9a-f]{8}-[0-9]+/

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The token of the k-th step (k ≥ 1) of the iteration with this seed.
 * @category constructors
 */
export const effectToken = (seed: number, k: number): string =>
  `chaos-${(seed >>> 0).toString(16).padStart(8, '0')}-${k}`

/**
 * The script file's steps (docs/contract.md §4, "Providers and tools"): each effect step as a tool call, then
 * one closing text. With `killAfterEffectOf`, that shell step SIGKILLs its own agent process right
 * after its effect, so the response of a call whose effect happened is never committed: the one
 * boundary no crash point of the executor reaches.
 * @category constructors
 */
export const scriptOf = (
  steps: ReadonlyArray<EffectStep>,
  killAfterEffectOf: string | null = null,
): ReadonlyArray<unknown> => [
  ...steps.map((step) =>
    step.tool === 'shell'
      ? {
          toolCall: {
            name: 'shell',
            args: {
              command:
                `printf '%s\\n' ${step.token} >> ${SHELL_EFFECTS_FILE}` +
                (step.token === killAfterEffectOf ? ' && kill -9 $PPID' : ''),
            },
          },
        }
      : {
          toolCall: {
            name: 'write_file',
            args: { path: `${WRITE_EFFECTS_DIR}/${step.token}`, content: `${step.token}\n` },
          },
        },
  ),
  { text: 'Chaos turn done.' },
]

/**
 * The side-effect token a chaos tool call carries, or null.
 * @category constructors
 */
export const tokenOfCall = (toolName: string, args: unknown): string | null => {
  const a = asObject(args)
  const field = toolName === 'shell' ? a?.['command'] : toolName === 'write_file' ? a?.['path'] : undefined
  return typeof field === 'string' ? (TOKEN.exec(field)?.[0] ?? null) : null
}

/**
 * The steps still to run in a session: those whose tool call has no committed response in any
 * ledger of the session.
 * @category constructors
 */
export const remainingSteps = (
  steps: ReadonlyArray<EffectStep>,
  snapshot: DataDirSnapshot,
  sessionId: string,
): ReadonlyArray<EffectStep> => {
  const tokenByCall = new Map<string, string>()
  const answered = new Set<string>()
  for (const run of snapshot.runs.values()) {
    if (run.sessionId !== sessionId) continue
    for (const row of committedRows(run.ledger)) {
      const content = asObject(row['content'])
      const id = content?.['id']
      if (content === null || typeof id !== 'string') continue
      if (content['kind'] === 'function_call' && typeof content['name'] === 'string') {
        const token = tokenOfCall(content['name'], content['args'])
        if (token !== null) tokenByCall.set(id, token)
      } else if (content['kind'] === 'function_response') {
        answered.add(id)
      }
    }
  }
  const done = new Set([...answered].flatMap((id) => tokenByCall.get(id) ?? []))
  return steps.filter((step) => !done.has(step.token))
}
