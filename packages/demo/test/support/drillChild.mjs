// The child a test host starts: one scripted turn (the built-in demo script) that speaks the drill's
// stdout protocol, with event summaries of its own shape ({ role, kind }). At the crash point it says
// `ready` and hangs until the drill SIGKILLs it; with `never` it runs the turn to its end instead.
import { DEMO_PROMPT } from '@maka/demo'
import { makeFileRuntime } from '@maka/executor'
import { DEMO_SCRIPT, makeScriptedProvider } from '@maka/providers'
import { builtinTools } from '@maka/tools'

const [dataDir, sessionId, cwd, at, mode] = process.argv.slice(2)
const emit = (message) => process.stdout.write(`${JSON.stringify(message)}\n`)
let reached = false
const { runtime } = makeFileRuntime({
  dataDir,
  tools: builtinTools(),
  providerFor: (run) =>
    makeScriptedProvider({ steps: run.kind === 'turn' ? DEMO_SCRIPT : [], toolCallIdPrefix: run.runId }),
  safeBoundaryResumeEnabled: true,
  permissionMode: 'allow',
  observer: {
    onEvent: (event) =>
      emit({ type: 'event', runId: event.runId, line: { role: event.role, kind: event.content?.kind ?? null } }),
  },
  onCrashPoint: (point, { runId }) => {
    if (mode === 'never' || reached || point !== at) return undefined
    reached = true
    emit({ type: 'ready', point, runId, pid: process.pid })
    return new Promise(() => setTimeout(() => process.exit(1), 120_000))
  },
})
const result = await runtime.runTurn({ sessionId, cwd, prompt: DEMO_PROMPT })
emit({ type: 'finished', outcome: result._tag === 'Finished' ? result.status : result._tag })
process.exit(1)
