/**
 * Bad input: one clear stderr line, exit 2, and not one byte changed in the data dir.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashTree, removeScratch, runCli, scratch } from './support.js'

describe('bad input', () => {
  let env: Awaited<ReturnType<typeof scratch>>
  let fileAsDataDir: string

  afterAll(removeScratch)

  beforeAll(async () => {
    env = await scratch()
    const made = await runCli(['run', '--data-dir', env.dataDir, '--session', 'known', '--cwd', env.workspace, 'hi'])
    expect(made.code).toBe(0)
    fileAsDataDir = join(env.root, 'not-a-dir')
    await writeFile(fileAsDataDir, 'a file, not a directory\n')
  })

  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, RegExp]> = [
    ['show with a traversal id', ['show', '../x'], /Invalid session id "\.\.\/x"/],
    ['resume with a traversal id', ['resume', '--session', '../x'], /Invalid session id/],
    ['run with a traversal id', ['run', '--session', '../x', 'hi'], /Invalid session id/],
    ['resume plan with a traversal run id', ['resume', 'plan', '--session', 'known', '--run', 'a/b'], /Invalid run id/],
    ['show of an unknown session', ['show', 'nope'], /Unknown session "nope"/],
    ['resume plan of an unknown session', ['resume', 'plan', '--session', 'nope'], /Unknown session "nope"/],
    ['resume plan of an unknown run', ['resume', 'plan', '--session', 'known', '--run', 'nope'], /Unknown run "nope"/],
    ['a misspelt option', ['sessions', '--jsn'], /unknown option '--jsn'/],
    ['an unknown crash point', ['demo', '--at', 'nowhere'], /argument 'nowhere' is invalid/],
  ]

  describe.concurrent('when the data dir is real', () => {
    it.each(cases)('%s exits 2 with one stderr line and changes nothing', async (_name, args, message) => {
      const before = await hashTree(env.dataDir)
      const result = await runCli([...args, '--data-dir', env.dataDir], { flag: true })
      expect(result.code).toBe(2)
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(result.stderr).toMatch(message)
      expect(result.stdout).toBe('')
      expect(await hashTree(env.dataDir)).toBe(before)
    })
  })

  describe.concurrent('when the data dir is a file', () => {
    const commands: ReadonlyArray<ReadonlyArray<string>> = [
      ['sessions'],
      ['show', 'known'],
      ['recover'],
      ['resume'],
      ['run', 'hi'],
    ]
    it.each(commands)('%s exits 2 naming the data dir and changes nothing', async (...args) => {
      const before = await hashTree(fileAsDataDir)
      const result = await runCli([...args, '--data-dir', fileAsDataDir], { flag: true })
      expect(result.code).toBe(2)
      expect(result.stderr.trimEnd().split('\n')).toEqual([
        `maka: The data directory ${fileAsDataDir} is not a directory.`,
      ])
      expect(await hashTree(fileAsDataDir)).toBe(before)
    })
  })
})
