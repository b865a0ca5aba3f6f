/**
 * A fresh clone tests one package alone: the files a clone would hold (tracked plus untracked that
 * are not ignored, so no dist/ and no node_modules/) are copied to a temp dir, installed with
 * `pnpm install`, and `pnpm --filter @maka/planner test` runs there with no build step before it.
 * Workspace imports resolve to TypeScript sources through the `@maka/source` condition; the one
 * planner test that runs built output builds it in the package's vitest globalSetup.
 */
import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { pnpm, run, workspaceRoot } from './workspace.js'

let clone = ''
afterAll(async () => {
  if (clone !== '') await rm(clone, { recursive: true, force: true })
})

const copyCheckout = async (to: string): Promise<number> => {
  const listed = await run('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: workspaceRoot,
  })
  const files = listed.stdout.split('\0').filter((file) => file !== '' && existsSync(join(workspaceRoot, file)))
  for (const file of files) {
    await mkdir(dirname(join(to, file)), { recursive: true })
    await copyFile(join(workspaceRoot, file), join(to, file))
  }
  return files.length
}

interface VitestReport {
  readonly numPassedTests: number
  readonly numFailedTests: number
  readonly numPendingTests: number
}

describe('a fresh clone', () => {
  describe('when one package is tested without building anything first', () => {
    it('passes every planner test', async () => {
      clone = await mkdtemp(join(tmpdir(), 'maka-clone-'))
      expect(await copyCheckout(clone)).toBeGreaterThan(0)
      for (const name of ['events', 'projection', 'stores', 'store-jsonl', 'planner'])
        expect(existsSync(join(clone, 'packages', name, 'dist')), `${name}/dist in the clone`).toBe(false)

      const [file, ...args] = pnpm()
      await run(file, [...args, 'install', '--frozen-lockfile', '--prefer-offline', '--reporter=silent'], {
        cwd: clone,
      })
      await run(file, [...args, '--filter', '@maka/planner', 'test'], { cwd: clone })

      const report = JSON.parse(
        await readFile(join(clone, 'packages', 'planner', 'test-results.json'), 'utf8'),
      ) as VitestReport
      expect(report.numFailedTests).toBe(0)
      expect(report.numPendingTests).toBe(0)
      expect(report.numPassedTests).toBeGreaterThan(100)
    })
  })
})
