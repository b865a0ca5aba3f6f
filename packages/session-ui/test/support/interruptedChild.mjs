// A real turn killed mid-flight: runs one scripted turn (a list_dir tool call, then text) and, at
// the crash point named on the command line, prints "ready" and hangs until the test SIGKILLs it.
import { makeFileRuntime } from '@maka/executor'
import { makeScriptedProvider } from '@maka/providers'
import { builtinTools } from '@maka/tools'

const [dataDir, sessionId, cwd, at] = process.argv.slice(2)
const { runtime } = makeFileRuntime({
  dataDir,
  tools: builtinTools(),
  providerFor: (run) =>
    makeScriptedProvider({
      steps: [{ toolCall: { name: 'list_dir', args: { path: '.' } } }, { text: 'never reached' }],
      toolCallIdPrefix: run.runId,
    }),
  safeBoundaryResumeEnabled: true,
  permissionMode: 'allow',
  onCrashPoint: (point) => {
    if (point !== at) return undefined
    process.stdout.write('ready\n')
    return new Promise(() => setTimeout(() => process.exit(1), 120_000))
  },
})
await runtime.runTurn({ sessionId, cwd, prompt: 'list the files' })
process.exit(1)
