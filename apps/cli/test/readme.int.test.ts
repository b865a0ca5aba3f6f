/**
 * The root README's quick start, pasted verbatim into a fresh shell: the `maka-on-path` block runs
 * in the checkout, then the `quick-start` block runs line by line in an empty temp dir with a fresh
 * `HOME` and no `MAKA_*` variables. Every command must exit with the code its comment promises;
 * the turn it kills is found and continued by `maka resume`.
 */
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { cliEnv, removeLater, removeScratch } from './support.js'

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..')

/** The first ```sh block after the `<!-- marker -->` comment. */
const blockAfter = (readme: string, marker: string): ReadonlyArray<string> => {
  const at = readme.indexOf(`<!-- ${marker} -->`)
  if (at < 0) throw new Error(`README.md has no <!-- ${marker} --> block`)
  const match = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))
  if (match?.[1] === undefined) throw new Error(`no sh block after <!-- ${marker} -->`)
  return match[1].split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
}

describe('README quick start', { timeout: 240_000 }, () => {
  afterAll(removeScratch)

  it('works pasted verbatim into a fresh shell', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
    const onPath = blockAfter(readme, 'maka-on-path')
    const quickStart = blockAfter(readme, 'quick-start')
    const dir = await mkdtemp(join(tmpdir(), 'maka-readme-'))
    removeLater(dir)
    const home = join(dir, 'home')
    const shell = join(dir, 'shell')
    await mkdir(home)
    await mkdir(shell)
    // Each quick-start line is followed by a marker with its exit code, so one run shows them all.
    const script = [
      `cd ${JSON.stringify(ROOT)}`,
      ...onPath,
      `cd ${JSON.stringify(shell)}`,
      ...quickStart.flatMap((line, i) => [line, `echo "::rc ${i} $?"`]),
    ].join('\n')
    const env = { ...cliEnv(false), HOME: home }
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((done) =>
      execFile('bash', ['--noprofile', '--norc', '-c', script], { env, timeout: 120_000 }, (_error, out, err) =>
        done({ stdout: out, stderr: err }),
      ),
    )
    const codes = [...stdout.matchAll(/^::rc (\d+) (\d+)$/gm)].map((m) => [quickStart[Number(m[1])], Number(m[2])])
    const expected = quickStart.map((line): [string | undefined, number] => [
      line,
      line.includes('maka resume plan') ? 3 : 0,
    ])
    expect({ codes, stderr }).toEqual({ codes: expected, stderr: expect.any(String) })
    expect(stdout).toMatch(/completed — session session-\w+, run run-\w+/)
    expect(stdout).toContain('"rejectionReasons"')
    // The crash of the quick start is found by `maka resume` without --session (issue 24) and continued.
    expect(stdout).toMatch(/^Resuming session session-\w+ from the latest safe boundary/m)
    expect(stdout).toMatch(/^completed — continuation run run-\w+ of source run run-\w+$/m)
  })
})
