import { mkdir, mkdtemp, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { canonicalCwd, observeWorkspace, workspaceIdentityOf } from './canonicalCwd.js'

let root: string

beforeEach(async () => {
  // realpath: on some hosts the temp dir itself sits behind a symlink (macOS /var -> /private/var).
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'maka-host-inspector-cwd-')))
})

afterEach(async () => {
  await rm(root, { recursive: true, force: true })
})

const right = <A>(result: { _tag: 'Left'; left: unknown } | { _tag: 'Right'; right: A }): A => {
  if (result._tag === 'Left') throw new Error(`expected Right, got ${JSON.stringify(result.left)}`)
  return result.right
}

describe('canonicalCwd', () => {
  describe('when the cwd is a symlink to a directory', () => {
    it('gives the same canonical cwd and the same identity as its target', async () => {
      const target = path.join(root, 'target')
      const link = path.join(root, 'link')
      await mkdir(target)
      await symlink(target, link)

      expect(right(await canonicalCwd(link)())).toBe(target)
      expect(right(await workspaceIdentityOf(link)())).toBe(right(await workspaceIdentityOf(target)()))
    })
  })

  describe('when the cwd has a trailing slash', () => {
    it('removes it', async () => {
      expect(right(await canonicalCwd(`${root}/`)())).toBe(root)
      expect(right(await canonicalCwd(`${root}//`)())).toBe(root)
    })

    it('keeps the root as /', async () => {
      expect(right(await canonicalCwd('/')())).toBe('/')
    })
  })

  describe('when the cwd has . and .. segments', () => {
    it('resolves them', async () => {
      await mkdir(path.join(root, 'a'))
      expect(right(await canonicalCwd(`${root}/a/../a/.`)())).toBe(path.join(root, 'a'))
    })
  })

  describe('when the cwd does not exist', () => {
    it('fails with CwdUnavailable and ENOENT', async () => {
      const missing = path.join(root, 'missing')
      const result = await canonicalCwd(missing)()
      expect(result).toMatchObject({ _tag: 'Left', left: { _tag: 'CwdUnavailable', path: missing, code: 'ENOENT' } })
    })
  })

  describe('when the cwd is relative or empty', () => {
    it('fails with InvalidCwd before touching the filesystem', async () => {
      expect(await canonicalCwd('relative/dir')()).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidCwd' } })
      expect(await canonicalCwd('')()).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidCwd' } })
      expect(await canonicalCwd('/tmp/\0x')()).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidCwd' } })
    })
  })
})

describe('workspaceIdentityOf', () => {
  describe('when the cwd is a directory', () => {
    it('is fs:<dev>:<ino>:<canonicalPath>', async () => {
      const identity = right(await workspaceIdentityOf(`${root}/`)())
      expect(identity).toMatch(/^fs:\d+:\d+:/)
      expect(identity.endsWith(`:${root}`)).toBe(true)
    })

    it('is stable across reads', async () => {
      expect(right(await workspaceIdentityOf(root)())).toBe(right(await workspaceIdentityOf(root)()))
    })
  })

  describe('when the directory is replaced by a new one at the same path', () => {
    it('gives a different identity', async () => {
      const dir = path.join(root, 'ws')
      await mkdir(dir)
      const before = right(await workspaceIdentityOf(dir)())
      // The old directory is moved aside, not deleted: while it lives its inode cannot be handed to
      // the new directory, so the test does not depend on the filesystem's inode reuse.
      await rename(dir, path.join(root, 'ws-old'))
      await mkdir(dir)
      const after = right(await workspaceIdentityOf(dir)())

      expect(after).not.toBe(before)
      expect(right(await canonicalCwd(dir)())).toBe(dir)
    })
  })

  describe('when the cwd is a file', () => {
    it('fails with NotADirectory', async () => {
      const file = path.join(root, 'file.txt')
      await writeFile(file, 'x')
      expect(await workspaceIdentityOf(file)()).toMatchObject({
        _tag: 'Left',
        left: { _tag: 'NotADirectory', path: file, canonicalPath: file },
      })
    })

    it('fails with NotADirectory through a symlink too', async () => {
      const file = path.join(root, 'file.txt')
      const link = path.join(root, 'file-link')
      await writeFile(file, 'x')
      await symlink(file, link)
      expect(await workspaceIdentityOf(link)()).toMatchObject({
        _tag: 'Left',
        left: { _tag: 'NotADirectory', path: link, canonicalPath: file },
      })
    })
  })

  describe('when the cwd is missing', () => {
    it('fails with CwdUnavailable', async () => {
      expect(await workspaceIdentityOf(path.join(root, 'missing'))()).toMatchObject({
        _tag: 'Left',
        left: { _tag: 'CwdUnavailable', code: 'ENOENT' },
      })
    })
  })

  describe('when the cwd is a dangling symlink', () => {
    it('fails with CwdUnavailable', async () => {
      const link = path.join(root, 'dangling')
      await symlink(path.join(root, 'nowhere'), link)
      expect(await observeWorkspace(link)()).toMatchObject({
        _tag: 'Left',
        left: { _tag: 'CwdUnavailable', code: 'ENOENT' },
      })
    })
  })
})
