/**
 * A write that fails says so: with a real permission failure (the session folder is not writable
 * for the user the CLI runs as), `run` and `resume` print exactly one stderr line naming the write
 * and the errno and exit 1 — never "another running process owns this session" (exit 3), never a
 * completed turn. And `--data-dir ''` is bad input, not the current directory.
 *
 * Root ignores mode bits, so as root the CLI child runs as `nobody` (uid/gid 65534); as any other
 * user it runs as that user. Either way the EACCES comes from the kernel, not from a test hook.
 */
import { spawnSync } from 'node:child_process'
import { chmod, chown, mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashTree, interruptedSession, removeScratch, runCli, scratch } from './support.js'

const asRoot = process.getuid?.() === 0
const NOBODY = 65534
const asUser = asRoot ? { uid: NOBODY, gid: NOBODY } : {}

/** Hands every path under `root` to the user the CLI child runs as. */
const handOver = async (root: string): Promise<void> => {
  if (!asRoot) return
  const walk = async (path: string): Promise<void> => {
    await chown(path, NOBODY, NOBODY)
    for (const entry of await readdir(path, { withFileTypes: true })) {
      if (entry.isDirectory()) await walk(join(path, entry.name))
      else await chown(join(path, entry.name), NOBODY, NOBODY)
    }
  }
  await walk(root)
}

describe('when a write to the data dir is refused by the filesystem (EACCES)', () => {
  let env: Awaited<ReturnType<typeof scratch>>
  const sessionId = 'locked-out'

  afterAll(async () => {
    await chmod(join(env.dataDir, 'sessions', sessionId), 0o700).catch(() => undefined)
    await removeScratch()
  })

  beforeAll(async () => {
    env = await scratch()
    // A resumable session, made by a real `maka run` killed with SIGKILL, then recovered.
    await interruptedSession(env.dataDir, env.workspace, sessionId, env.root)
    expect((await runCli(['recover', '--data-dir', env.dataDir], { flag: true })).code).toBe(0)
    await handOver(env.root)
    // The owner of the session folder may read and enter it, but not create owner.lock in it.
    await chmod(join(env.dataDir, 'sessions', sessionId), 0o500)
  })

  const lockLine = `could not create owner.lock of session ${sessionId}: permission denied (EACCES at open)`

  it('run exits 1 with one stderr line naming the owner-lock create and the errno, and changes nothing', async () => {
    const before = await hashTree(env.dataDir)
    const result = await runCli(['run', '--data-dir', env.dataDir, '--session', sessionId, 'hello'], {
      flag: true,
      cwd: env.workspace,
      ...asUser,
    })
    // The recovered session needs no repair, so recovery takes no lock; the turn's own lock is refused.
    expect(result.stderr.trimEnd().split('\n')).toEqual([`maka: ${lockLine}; the turn did not start.`])
    expect(result.code).toBe(1)
    expect(result.stdout).not.toMatch(/completed/)
    expect(result.stderr).not.toMatch(/hello/)
    expect(await hashTree(env.dataDir)).toBe(before)
  })

  it('resume exits 1 naming the write, not 3 for "another running process owns this session"', async () => {
    const before = await hashTree(env.dataDir)
    const result = await runCli(['resume', '--data-dir', env.dataDir, '--session', sessionId], {
      flag: true,
      cwd: env.workspace,
      ...asUser,
    })
    expect(result.stderr.trimEnd().split('\n')).toEqual([`maka: ${lockLine}; the continuation did not start.`])
    expect(result.code).toBe(1)
    expect(result.stdout).not.toMatch(/another running process|session_owner_alive|completed/)
    expect(await hashTree(env.dataDir)).toBe(before)
  })

  it('recover exits 1 with the same line, after reporting what it skipped', async () => {
    // Recovery locks only a session that needs a repair: a shell run still marked running whose
    // process is gone is one.
    const session = join(env.dataDir, 'sessions', sessionId)
    const [runId] = await readdir(join(session, 'runs'))
    const gone = spawnSync(process.execPath, ['-e', '0']).pid
    await chmod(session, 0o700)
    await mkdir(join(session, 'shell-runs'), { recursive: true })
    const record = join(session, 'shell-runs', 'orphan.json')
    const shellRun = { shellRunId: 'orphan', sessionId, runId, command: 'sleep 1', status: 'running' }
    await writeFile(record, JSON.stringify({ ...shellRun, pid: gone, startedAt: new Date().toISOString() }))
    await handOver(session)
    await chmod(session, 0o500)
    const result = await runCli(['recover', '--data-dir', env.dataDir], { flag: true, ...asUser })
    expect(result.stderr.trimEnd().split('\n')).toEqual([`maka: recovery stopped: ${lockLine}`])
    expect(result.code).toBe(1)
  })
})

describe("when --data-dir is ''", () => {
  afterAll(removeScratch)

  const commands: ReadonlyArray<ReadonlyArray<string>> = [
    ['sessions'],
    ['recover'],
    ['run', 'hello'],
    ['resume'],
    ['resume', 'plan'],
    ['demo'],
  ]
  it.each(commands)('%s exits 2 with one stderr line and creates nothing in the current directory', async (...args) => {
    const env = await scratch()
    const before = await hashTree(env.workspace)
    const result = await runCli([...args, '--data-dir', ''], { flag: true, cwd: env.workspace })
    expect(result.code).toBe(2)
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      'maka: The data directory is empty (--data-dir ""): name a directory.',
    ])
    expect(result.stdout).toBe('')
    expect(await hashTree(env.workspace)).toBe(before)
  })
})
