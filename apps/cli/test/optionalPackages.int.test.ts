/**
 * The built `maka` as an install without its optional peers has it: `dist/` and `package.json`
 * copied into a scratch folder outside the workspace, so no node_modules above it holds
 * better-sqlite3, pg, the PostgreSQL adapter or the web UI. Choosing a store or the UI whose package
 * is missing is exit 2 with one sentence naming what to install, and nothing written.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, type CliResult, cliEnv, removeLater, removeScratch, scratch } from './support.js'

afterAll(removeScratch)

let bin = ''
beforeAll(async () => {
  const root = await mkdtemp(join(tmpdir(), 'maka-bare-install-'))
  removeLater(root)
  const packageDir = dirname(dirname(CLI))
  await cp(join(packageDir, 'dist'), join(root, 'dist'), { recursive: true })
  await cp(join(packageDir, 'package.json'), join(root, 'package.json'))
  bin = join(root, 'dist', 'bin.cjs')
})

// pnpm puts its virtual store on NODE_PATH for the scripts it runs; an install has no such thing.
const bareEnv = (): NodeJS.ProcessEnv => {
  const env = cliEnv(false)
  delete env['NODE_PATH']
  return env
}

const bare = (args: ReadonlyArray<string>): Promise<CliResult> =>
  new Promise((done) => {
    execFile(process.execPath, [bin, ...args], { env: bareEnv(), timeout: 45_000 }, (error, stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr })
    })
  })

describe('maka installed without its optional packages', () => {
  describe('when a store or the UI needs a package that is not installed', () => {
    it.each<[string, (root: string) => ReadonlyArray<string>, string]>([
      [
        'a SQLite store',
        (root) => [
          'run',
          '--data-dir',
          join(root, 'data'),
          '--store',
          `sqlite:${join(root, 'maka.db')}`,
          '--cwd',
          join(root, 'ws'),
          'hi',
        ],
        'maka: The SQLite store (sqlite:FILE) needs better-sqlite3, which is not installed: run `npm install -g better-sqlite3@12.11.1` (beside @maka/cli) and try again.',
      ],
      [
        'a PostgreSQL store',
        (root) => [
          'run',
          '--data-dir',
          join(root, 'data'),
          '--store',
          'postgres://maka@127.0.0.1:9/maka',
          '--cwd',
          join(root, 'ws'),
          'hi',
        ],
        'maka: The PostgreSQL store (postgres://…) needs pg, which is not installed: run `npm install -g pg@8.23.1` (beside @maka/cli) and try again.',
      ],
      [
        'the web UI',
        (root) => ['ui', '--no-open', '--data-dir', join(root, 'ui-data')],
        'maka: maka ui needs @maka/session-ui, which is not installed: run `npm install -g @maka/session-ui@0.1.0` (beside @maka/cli) and try again.',
      ],
    ])('exits 2 on %s, naming the package, and writes nothing', async (_what, args, sentence) => {
      const { root } = await scratch()
      const before = await readdir(root)
      const result = await bare(args(root))
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toBe(`${sentence}\n`)
      expect(await readdir(root)).toEqual(before)
      expect(existsSync(join(root, 'maka.db'))).toBe(false)
    })
  })
})
