/**
 * Start-up of the built `maka`: a command loads the bundle and its own chunks, not the ~100
 * modules of the packages, and never ink, react or the OpenAI client unless it uses them.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const CLI = fileURLToPath(new URL('../dist/bin.cjs', import.meta.url))
const PRELOAD = fileURLToPath(new URL('./fixtures/logModuleLoads.mjs', import.meta.url))

const modulesLoadedBy = async (args: ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
  const dir = await mkdtemp(join(tmpdir(), 'maka-startup-'))
  try {
    const log = join(dir, 'modules.log')
    const child = spawnSync(process.execPath, ['--import', PRELOAD, CLI, ...args, '--data-dir', join(dir, 'data')], {
      env: { ...process.env, MAKA_TEST_MODULE_LOG: log },
      encoding: 'utf8',
    })
    expect(child.status).toBe(0)
    return (await readFile(log, 'utf8')).split('\n').filter((url) => url !== '' && !url.endsWith('/logModuleLoads.mjs'))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

describe('the built maka executable', () => {
  describe.each([['sessions'], ['recover'], ['--help']])('when `maka %s` starts', (command) => {
    it('loads a handful of bundle files and none of ink, react, openai or the packages’ own modules', async () => {
      const loaded = await modulesLoadedBy([command])

      expect(loaded.length).toBeGreaterThan(0)
      expect(loaded.length).toBeLessThanOrEqual(16)
      expect(loaded.every((url) => url.includes('/apps/cli/dist/'))).toBe(true)
      expect(loaded.filter((url) => /\/(ink|react|openai)\//.test(url))).toEqual([])
    })
  })
})
