/**
 * `maka run` as a person watches it: the model's text appears while it streams (a stalled stream
 * has already shown its first words), and each tool call shows what it ran — the shell command line,
 * the path — with the first lines of what it printed, in text mode only: `--json` and the verbose
 * log on stderr never carry an argument or an output.
 */
import { spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEndpointDouble } from './endpointDouble.js'
import { CLI, cliEnv, jsonLines, removeScratch, runCli, scratch, scriptFile, waitFor } from './support.js'

describe('maka run output in text mode', { timeout: 120_000 }, () => {
  let env: Awaited<ReturnType<typeof scratch>>

  beforeAll(async () => {
    env = await scratch()
  })

  afterAll(removeScratch)

  describe('when the model streams slowly', () => {
    it('prints the words that arrived before the answer is committed', async () => {
      // The endpoint sends "Thinking" and then nothing: the answer is never committed.
      const double = await startEndpointDouble([{ stall: true }])
      try {
        const child = spawn(
          process.execPath,
          [
            CLI,
            'run',
            '--data-dir',
            env.dataDir,
            '--cwd',
            env.workspace,
            '--provider',
            'openai-compatible',
            '--base-url',
            double.baseUrl,
            '--model',
            'm',
            '--timeout',
            '600000',
            'think about it',
          ],
          { env: { ...cliEnv(false), MAKA_API_KEY: 'k' }, stdio: ['ignore', 'pipe', 'pipe'] },
        )
        let out = ''
        let ended = false
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
        const exit = new Promise<number | null>((done) =>
          child.on('close', (code) => {
            ended = true
            done(code)
          }),
        )
        try {
          await waitFor('the streamed words', () => out.includes('Thinking') || ended, 60_000)
          expect(ended).toBe(false)
          expect(out).toMatch(/^model\s+text\s+Thinking/m)
          child.kill('SIGINT')
          expect(await exit).toBe(130)
        } finally {
          if (!ended) child.kill('SIGKILL')
        }
      } finally {
        await double.close()
      }
    })
  })

  describe('when tools run', () => {
    const steps = [
      {
        toolCall: {
          name: 'shell',
          args: { command: "printf 'alpha-out\\nbeta-out\\ngamma\\ndelta\\nepsilon\\nzeta\\n'" },
        },
      },
      { toolCall: { name: 'read_file', args: { path: 'hello.txt' } } },
      { text: 'Looked.' },
    ]

    it('shows the command line, the path and a short preview of each output, never in --json or the verbose log', async () => {
      const script = await scriptFile(env.root, 'tools.json', steps)
      const result = await runCli(
        ['run', '--data-dir', env.dataDir, '--cwd', env.workspace, '--script', script, '--yes', '--verbose', 'look'],
        { flag: true },
      )
      expect(result.code).toBe(0)
      const lines = result.stdout.split('\n')
      expect(lines).toContainEqual(expect.stringMatching(/^model\s+function_call\s+shell$/))
      expect(lines).toContainEqual(expect.stringMatching(/^\s+\$ printf 'alpha-out\\nbeta-out/))
      expect(lines).toContainEqual(expect.stringMatching(/^\s+│ alpha-out$/))
      expect(lines).toContainEqual(expect.stringMatching(/^\s+│ beta-out$/))
      // A few lines only: the rest is counted.
      expect(result.stdout).not.toContain('│ zeta')
      expect(lines).toContainEqual(expect.stringMatching(/^\s+│ … 2 more lines$/))
      expect(lines).toContainEqual(expect.stringMatching(/^\s+hello\.txt$/))
      expect(lines).toContainEqual(expect.stringMatching(/^\s+│ hello SECRET-RESULT$/))
      expect(lines).toContainEqual(expect.stringMatching(/^model\s+text\s+Looked\.$/))
      // The verbose lifecycle log never carries an argument or an output.
      expect(result.stderr).not.toContain('printf')
      expect(result.stderr).not.toContain('alpha-out')
      expect(result.stderr).not.toContain('hello.txt')
      expect(result.stderr).not.toContain('SECRET-RESULT')

      // The --json stream keeps naming tools and outcomes only.
      const json = await runCli(
        ['run', '--data-dir', env.dataDir, '--cwd', env.workspace, '--script', script, '--yes', '--json', 'look'],
        { flag: true },
      )
      expect(json.code).toBe(0)
      expect(jsonLines(json).at(-1)).toMatchObject({ type: 'result', status: 'completed' })
      for (const secret of ['printf', 'alpha-out', 'hello.txt', 'SECRET-RESULT'])
        expect(json.stdout).not.toContain(secret)
    })
  })
})
