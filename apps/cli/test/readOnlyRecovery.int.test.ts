/**
 * Inspecting a data dir that recovery cannot write: a symlinked `owner.lock`, a `claims` that is a
 * file, a session folder the CLI's user may not write (a real EACCES: as root the CLI child runs as
 * `nobody`), and a read-only bind mount (a real EROFS, when this host lets root mount). In each,
 * `resume plan` and `resume` say on stderr what recovery would repair and park with
 * `recovery_unwritable` (exit 3) without writing one byte or one mtime of the data dir; `recover`
 * still says it could not repair (exit 1); another session of the same data dir plans normally.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmod,
  chown,
  cp,
  lstat,
  mkdir,
  readFile,
  readdir,
  readlink,
  rename,
  symlink,
  writeFile,
} from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { interruptedSession, removeScratch, runCli, scratch, type CliResult } from './support.js'

const asRoot = process.getuid?.() === 0
const NOBODY = 65534
const asUser = asRoot ? { uid: NOBODY, gid: NOBODY } : {}

interface PlanJson {
  readonly disposition: string
  readonly rejectionReasons: ReadonlyArray<string>
  readonly diagnostics: ReadonlyArray<{ readonly code: string; readonly detail: Record<string, unknown> }>
  readonly sourceRunId: string | null
}

/** Every entry below `dir` with its type, mode, size, mtime and content (or link target). */
const snapshot = async (dir: string): Promise<ReadonlyArray<string>> => {
  const lines: Array<string> = []
  const walk = async (path: string, rel: string): Promise<void> => {
    const stat = await lstat(path)
    const head = `${rel} mode=${stat.mode.toString(8)} size=${stat.size} mtime=${stat.mtimeMs}`
    if (stat.isSymbolicLink()) lines.push(`${head} link=${await readlink(path)}`)
    else if (stat.isDirectory()) {
      lines.push(`${head} dir`)
      for (const name of (await readdir(path)).sort()) await walk(join(path, name), `${rel}/${name}`)
    } else {
      lines.push(
        `${head} sha256=${createHash('sha256')
          .update(await readFile(path))
          .digest('hex')}`,
      )
    }
  }
  await walk(dir, '.')
  return lines
}

/** Hands every path under `root` to the user the CLI child runs as (root ignores mode bits). */
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

const planOf = (result: CliResult): PlanJson => JSON.parse(result.stdout) as PlanJson
const resumePlanOf = (result: CliResult): PlanJson =>
  (
    result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line['type'] === 'plan') as { readonly plan: PlanJson }
  ).plan

// A data dir with `other` (interrupted, then recovered: it needs nothing) and `broken` (interrupted,
// never recovered: its run is still `running`), each from a real `maka run` killed with SIGKILL.
let template: { readonly root: string; readonly dataDir: string; readonly workspace: string; readonly runId: string }
beforeAll(async () => {
  const env = await scratch()
  await interruptedSession(env.dataDir, env.workspace, 'other', env.root)
  expect((await runCli(['recover', '--data-dir', env.dataDir], { flag: true })).code).toBe(0)
  await interruptedSession(env.dataDir, env.workspace, 'broken', env.root)
  const [runId] = await readdir(join(env.dataDir, 'sessions', 'broken', 'runs'))
  // The CLI child may run as `nobody`: it must reach the workspace the sessions recorded.
  await chmod(env.root, 0o755)
  template = { ...env, runId: runId ?? '' }
}, 120_000)

afterAll(removeScratch)

/** A copy of the template (the same workspace, so `other`'s recorded cwd still holds). */
const givenCopy = async (): Promise<{ readonly root: string; readonly dataDir: string }> => {
  const { root } = await scratch()
  const dataDir = join(root, 'data')
  await cp(template.dataDir, dataDir, { recursive: true, preserveTimestamps: true })
  return { root, dataDir }
}

interface Case {
  readonly name: string
  /** Breaks the copy; returns the data dir the CLI is given (a mount point for EROFS). */
  readonly breakIt: (copy: { readonly root: string; readonly dataDir: string }) => Promise<string>
  readonly refusal: { readonly operation: string; readonly code: string; readonly path: string }
  readonly user?: { readonly uid?: number; readonly gid?: number }
}

const cases: ReadonlyArray<Case> = [
  {
    name: 'owner.lock is a symbolic link',
    breakIt: async ({ root, dataDir }) => {
      const lock = join(dataDir, 'sessions', 'broken', 'owner.lock')
      await rename(lock, join(root, 'elsewhere.lock'))
      await symlink(join(root, 'elsewhere.lock'), lock)
      return dataDir
    },
    refusal: { operation: 'lstat', code: 'SymlinkInDataDir', path: 'sessions/broken/owner.lock' },
  },
  {
    name: 'claims is a file instead of a folder',
    breakIt: async ({ dataDir }) => {
      await writeFile(join(dataDir, 'sessions', 'broken', 'claims'), 'not a folder\n')
      return dataDir
    },
    refusal: { operation: 'list', code: 'ENOTDIR', path: 'sessions/broken/claims' },
  },
  {
    name: 'the session folder may not be written (EACCES)',
    breakIt: async ({ root, dataDir }) => {
      await handOver(root)
      // Its owner may read and enter it, but not create owner.lock in it.
      await chmod(join(dataDir, 'sessions', 'broken'), 0o500)
      return dataDir
    },
    refusal: { operation: 'open', code: 'EACCES', path: 'sessions/broken/owner.lock' },
    user: asUser,
  },
]

const lineOf = (refusal: Case['refusal']) =>
  `maka: recovery cannot repair session broken here (${refusal.code} at ${refusal.operation} of ${refusal.path}): ` +
  `it would close run ${template.runId}; nothing was written.`

describe.each(cases)('when $name', (c) => {
  let dataDir: string
  let before: ReadonlyArray<string>
  const cli = (args: ReadonlyArray<string>, flag = true) =>
    runCli([...args, '--data-dir', dataDir], { flag, cwd: template.workspace, ...(c.user ?? {}) })

  beforeAll(async () => {
    dataDir = await c.breakIt(await givenCopy())
    before = await snapshot(dataDir)
  })

  it('resume plan says what recovery would repair, parks recovery_unwritable (exit 3) and writes nothing', async () => {
    const text = await cli(['resume', 'plan', '--session', 'broken'])
    expect(text.stderr.trimEnd().split('\n')).toEqual([lineOf(c.refusal)])
    expect(text.code).toBe(3)
    expect(text.stdout).toContain('(recovery_unwritable)')
    expect(text.stdout).not.toMatch(/list the files/)

    const asJson = await cli(['resume', 'plan', '--session', 'broken', '--json'])
    expect(asJson.code).toBe(3)
    const plan = planOf(asJson)
    expect(plan).toMatchObject({ disposition: 'park', rejectionReasons: ['recovery_unwritable'], sourceRunId: null })
    expect(plan.diagnostics).toEqual([expect.objectContaining({ code: 'recovery_unwritable', detail: c.refusal })])
    // Without --session the most recent session is the broken one: the same answer.
    expect((await cli(['resume', 'plan'])).code).toBe(3)
    expect(await snapshot(dataDir)).toEqual(before)
  })

  it('resume parks with the same reason (exit 3) and writes nothing', async () => {
    const result = await cli(['resume', '--session', 'broken', '--json'])
    expect(result.stderr.trimEnd().split('\n')).toEqual([lineOf(c.refusal)])
    expect(result.code).toBe(3)
    expect(resumePlanOf(result).rejectionReasons).toEqual(['recovery_unwritable'])
    expect(await snapshot(dataDir)).toEqual(before)
  })

  it('without the flag the plan parks on the flag first, and still writes nothing', async () => {
    const result = await cli(['resume', 'plan', '--session', 'broken', '--json'], false)
    expect(result.code).toBe(3)
    expect(planOf(result).rejectionReasons).toEqual(['resume_feature_disabled'])
    expect(result.stderr.trimEnd().split('\n')).toEqual([lineOf(c.refusal)])
    expect(await snapshot(dataDir)).toEqual(before)
  })

  it('sessions and show read it, recover still says it could not repair (exit 1), and nothing is written', async () => {
    expect((await cli(['sessions'])).code).toBe(0)
    expect((await cli(['show', 'broken'])).code).toBe(0)
    const recovered = await cli(['recover'])
    expect(recovered.code).toBe(1)
    expect(recovered.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^maka: recovery stopped: /)])
    expect(await snapshot(dataDir)).toEqual(before)
  })

  it('another session of the same data dir plans normally', async () => {
    const result = await cli(['resume', 'plan', '--session', 'other', '--json'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(planOf(result)).toMatchObject({ disposition: 'continue', rejectionReasons: [] })
    expect(await snapshot(dataDir)).toEqual(before)
  })
})

// Root bind-mounts a copy read-only here, which gives a real EROFS. The tests run as root on Linux
// (CI does); a host where `mount` is refused fails this case rather than skipping it.
describe('when the data dir is a read-only mount (EROFS)', () => {
  let source: string
  let mountPoint: string
  let mounted = false
  let before: ReadonlyArray<string>

  beforeAll(async () => {
    const copy = await givenCopy()
    source = copy.dataDir
    mountPoint = join(copy.root, 'snapshot')
    await mkdir(mountPoint)
    execFileSync('mount', ['--bind', source, mountPoint], { stdio: 'pipe' })
    mounted = true
    execFileSync('mount', ['-o', 'remount,ro,bind', mountPoint], { stdio: 'pipe' })
    before = await snapshot(source)
  })

  // Before the scratch dirs are removed (removeScratch runs in the file's afterAll, after this one).
  afterAll(() => {
    if (mounted) execFileSync('umount', [mountPoint])
  })

  const cli = (args: ReadonlyArray<string>) =>
    runCli([...args, '--data-dir', mountPoint], { flag: true, cwd: template.workspace })

  it('resume plan parks recovery_unwritable (EROFS at open of owner.lock), exit 3, nothing written', async () => {
    const result = await cli(['resume', 'plan', '--session', 'broken', '--json'])
    const refusal = { operation: 'open', code: 'EROFS', path: 'sessions/broken/owner.lock' }
    expect(result.stderr.trimEnd().split('\n')).toEqual([lineOf(refusal)])
    expect(result.code).toBe(3)
    expect(planOf(result).diagnostics).toEqual([
      expect.objectContaining({ code: 'recovery_unwritable', detail: refusal }),
    ])
    // The recovered session needs no repair, so it plans as usual from the read-only copy.
    const other = await cli(['resume', 'plan', '--session', 'other', '--json'])
    expect(other.code).toBe(0)
    expect(planOf(other).disposition).toBe('continue')
    expect(await snapshot(source)).toEqual(before)
  })

  it('resume refuses a data dir it cannot write up front (exit 2), as before, and writes nothing', async () => {
    const result = await cli(['resume', '--session', 'broken'])
    expect(result.code).toBe(2)
    expect(result.stderr.trimEnd().split('\n')).toEqual([`maka: The data directory ${mountPoint} cannot be written.`])
    expect(await snapshot(source)).toEqual(before)
  })
})
