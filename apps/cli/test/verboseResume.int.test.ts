/**
 * `maka resume --verbose` prints its lifecycle lines on stderr and nothing else: resuming a run of
 * the scripted model with a `--script` file is the same model fed another script, not a switch of
 * model, so no "instead of the recorded …" note appears among those lines (it once did, garbled:
 * "instead of the recorded the scripted model."). A real switch of model still gets its one line
 * (endpoint.int.test.ts).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { interruptedSession, removeScratch, runCli, scratch, scriptFile } from './support.js'

afterAll(removeScratch)

describe('when a scripted session is resumed with --verbose and a --script file', () => {
  it('stderr holds only lifecycle lines, and the continuation runs the script', async () => {
    const env = await scratch()
    await interruptedSession(env.dataDir, env.workspace, 'chatty', env.root)
    const script = await scriptFile(env.root, 'continue.json', [{ text: 'scripted continuation' }])
    const result = await runCli(
      ['resume', '--data-dir', env.dataDir, '--session', 'chatty', '--script', script, '--verbose'],
      { flag: true, cwd: env.workspace },
    )
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain('scripted continuation')
    const lines = result.stderr.trimEnd().split('\n')
    expect(lines.length).toBeGreaterThan(0)
    // Beside them, the one line every resume prints saying which model and permission mode it uses
    // (decision 186); a script file for the scripted model is the recorded model, not a switch.
    for (const line of lines) {
      expect(line).toMatch(
        /^maka: (recovery |plan_approved |execution_started |execution_completed |using the scripted model with the given script \(recorded by run )/,
      )
    }
    expect(result.stderr).not.toContain('instead of')
  })
})
