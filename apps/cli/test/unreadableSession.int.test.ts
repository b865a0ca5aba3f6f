/**
 * A data dir whose only session has a `session.json` that cannot be read: `maka sessions` lists that
 * session as unreadable, so `resume plan` and `resume` must not answer "no sessions". They name it
 * in one stderr line and exit 2 (bad input), and write nothing.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashTree, interruptedSession, removeScratch, runCli, scratch } from './support.js'

afterAll(removeScratch)

describe('when the only session of the data dir has an unreadable session.json', () => {
  let env: Awaited<ReturnType<typeof scratch>>

  beforeAll(async () => {
    env = await scratch()
    await interruptedSession(env.dataDir, env.workspace, 'garbled', env.root)
    await writeFile(join(env.dataDir, 'sessions', 'garbled', 'session.json'), 'this is not json\n')
  }, 120_000)

  const line = () =>
    `maka: The session "garbled" cannot be read (Unreadable), and ${env.dataDir} holds no other session.`

  it('sessions lists it as unreadable', async () => {
    const listed = await runCli(['sessions', '--data-dir', env.dataDir], { flag: true })
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(/^garbled .*session\.json Unreadable/m)
  })

  it.each(
    [['resume', 'plan'], ['resume', 'plan', '--json'], ['resume'], ['resume', '--json']].map((args) => ({
      command: args.join(' '),
      args,
    })),
  )('$command names it in one stderr line, exit 2, and writes nothing', async ({ args }) => {
    const before = await hashTree(env.dataDir)
    const result = await runCli([...args, '--data-dir', env.dataDir], { flag: true, cwd: env.workspace })
    expect(result.stderr.trimEnd().split('\n')).toEqual([line()])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(await hashTree(env.dataDir)).toBe(before)
  })

  it('a session folder whose session.json was never written is still no session (exit 3, nothing to resume)', async () => {
    const empty = await scratch()
    await mkdir(join(empty.dataDir, 'sessions', 'half-made'), { recursive: true })
    const result = await runCli(['resume', 'plan', '--data-dir', empty.dataDir], { flag: true })
    expect(result.code).toBe(3)
    expect(result.stdout).toContain('(no sessions)')
    expect(result.stdout).toContain('(resume_candidate_missing)')
  })
})
