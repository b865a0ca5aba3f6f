import { mkdir, symlink, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import fc from 'fast-check'
import * as E from 'fp-ts/lib/Either.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { resolveInsideWorkspace } from '../src/index.js'
import { givenWorkspaceUnsafe, type Workspace } from './givenWorkspace.js'

describe('resolveInsideWorkspace', () => {
  let ws: Workspace
  beforeEach(async () => {
    ws = await givenWorkspaceUnsafe()
  })
  afterEach(async () => {
    await ws.cleanup()
  })

  const resolveIn = (requested: string) => resolveInsideWorkspace(ws.root, requested)

  describe('when the path stays inside the workspace', () => {
    it('resolves a relative path against the workspace root', async () => {
      await writeFile(path.join(ws.root, 'a.txt'), 'a')
      expect(await resolveIn('a.txt')).toEqual(E.right(path.join(ws.root, 'a.txt')))
    })

    it('resolves a new file under missing folders from its nearest existing parent', async () => {
      expect(await resolveIn('new/deeper/file.txt')).toEqual(E.right(path.join(ws.root, 'new/deeper/file.txt')))
    })

    it('accepts an absolute path inside and "." for the root itself', async () => {
      expect(await resolveIn(path.join(ws.root, 'x'))).toEqual(E.right(path.join(ws.root, 'x')))
      expect(await resolveIn('.')).toEqual(E.right(ws.root))
    })

    it('follows a symlink that points inside', async () => {
      await mkdir(path.join(ws.root, 'real'))
      await symlink(path.join(ws.root, 'real'), path.join(ws.root, 'alias'))
      expect(await resolveIn('alias/f.txt')).toEqual(E.right(path.join(ws.root, 'real/f.txt')))
    })

    it('confines to the real workspace when the cwd itself is reached through a symlink', async () => {
      const viaLink = path.join(ws.outside, 'to-workspace')
      await symlink(ws.root, viaLink)
      expect(await resolveInsideWorkspace(viaLink, 'f.txt')).toEqual(E.right(path.join(ws.root, 'f.txt')))
      expect(await resolveInsideWorkspace(viaLink, path.join(viaLink, 'f.txt'))).toEqual(
        E.right(path.join(ws.root, 'f.txt')),
      )
    })
  })

  describe('when the path escapes the workspace', () => {
    it.each([
      ['a ".." escape', () => '../outside/secret.txt'],
      ['a ".." escape to a new file', () => 'sub/../../x.txt'],
      ['an absolute path outside', () => path.join(ws.outside, 'secret.txt')],
      ['the filesystem root', () => '/'],
    ])('refuses %s', async (_, requested) => {
      const result = await resolveIn(requested())
      expect(E.isLeft(result) && result.left._tag).toBe('OutsideWorkspace')
    })

    it('refuses a symlink inside that points outside, and paths through it', async () => {
      await symlink(ws.outside, path.join(ws.root, 'escape'))
      await symlink(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'secret-link'))
      for (const requested of ['escape', 'escape/secret.txt', 'escape/new/file.txt', 'secret-link']) {
        const result = await resolveIn(requested)
        expect(E.isLeft(result) && result.left._tag, requested).toBe('OutsideWorkspace')
      }
    })

    it('refuses a dangling symlink whose target would be created outside', async () => {
      await symlink(path.join(ws.outside, 'not-yet.txt'), path.join(ws.root, 'dangling'))
      await symlink(path.join(ws.outside, 'missing-dir'), path.join(ws.root, 'dangling-dir'))
      expect(E.isLeft(await resolveIn('dangling'))).toBe(true)
      expect(E.isLeft(await resolveIn('dangling-dir/a/b.txt'))).toBe(true)
    })

    it('applies ".." after a symlink to the link target, as the kernel does', async () => {
      await mkdir(path.join(ws.outside, 'inner'))
      await symlink(path.join(ws.outside, 'inner'), path.join(ws.root, 'inner-link'))
      const result = await resolveIn('inner-link/../secret.txt')
      expect(E.isLeft(result) && result.left._tag).toBe('OutsideWorkspace')
    })
  })

  describe('when the path cannot be resolved', () => {
    it('reports a symlink loop as a failure, not a throw', async () => {
      await symlink('loop-b', path.join(ws.root, 'loop-a'))
      await symlink('loop-a', path.join(ws.root, 'loop-b'))
      const result = await resolveIn('loop-a/x.txt')
      expect(result).toMatchObject({ _tag: 'Left', left: { _tag: 'FileSystemFailed' } })
      expect(E.isLeft(result) && result.left.message).toMatch(/symbolic links/)
    })

    it('reports a missing workspace', async () => {
      const result = await resolveInsideWorkspace(path.join(ws.root, 'gone'), 'a.txt')
      expect(result).toMatchObject({ _tag: 'Left', left: { _tag: 'WorkspaceUnavailable' } })
    })
  })

  describe('when paths are built from arbitrary segments and links', () => {
    it('only ever returns a path inside the workspace root', async () => {
      await mkdir(path.join(ws.root, 'a/b'), { recursive: true })
      await symlink(ws.outside, path.join(ws.root, 'out'))
      await symlink(path.join(ws.root, 'a'), path.join(ws.root, 'a/b/up'))
      await symlink('../..', path.join(ws.root, 'a/b/rel'))
      const segment = fc.constantFrom('a', 'b', '..', '.', 'out', 'up', 'rel', 'secret.txt', 'new')
      await fc.assert(
        fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 8 }), async (segments) => {
          const result = await resolveIn(segments.join('/'))
          if (E.isRight(result)) {
            expect(result.right === ws.root || result.right.startsWith(`${ws.root}${path.sep}`)).toBe(true)
          }
        }),
        { numRuns: 300 },
      )
    })
  })
})
