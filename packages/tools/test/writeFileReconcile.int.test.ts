import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmod, mkdir, open, rm, symlink, truncate, unlink, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import * as fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  computeReconcileBasis,
  makeWriteFileTool,
  runProbe,
  WRITE_FILE_HASH_CAP_BYTES,
  type ProbeVerdict,
} from '../src/index.js'
import { givenWorkspaceUnsafe, type Workspace } from './givenWorkspace.js'

const writeFileTool = makeWriteFileTool()
// Root reads a file whatever its mode bits say, so what EACCES gives depends on who runs the tests.
const runsAsRoot = process.getuid?.() === 0

const sha256 = (bytes: Buffer | string): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`

const mkfifo = (at: string): void => {
  execFileSync('mkfifo', [at])
}

/** A file of `size` zero bytes, without writing them (sparse). */
const givenFileOfSize = async (at: string, size: number): Promise<void> => {
  await writeFile(at, '')
  await truncate(at, size)
}

describe('write_file reconcile', () => {
  let ws: Workspace
  const at = (relative: string): string => path.join(ws.root, relative)
  const basisFor = async (args: unknown): Promise<string> => {
    const basis = await computeReconcileBasis(writeFileTool, args, ws.context)
    if (E.isLeft(basis)) throw new Error(`no basis: ${basis.left.code}`)
    return basis.right
  }
  const probe = (args: unknown, basis: string): Promise<ProbeVerdict> =>
    runProbe(writeFileTool, args, ws.context, basis)

  beforeEach(async () => {
    ws = await givenWorkspaceUnsafe()
  })
  afterEach(async () => {
    await ws.cleanup()
  })

  describe('basis', () => {
    it('is none when the args fail validation', async () => {
      expect(await basisFor({ path: 'a.txt' })).toBe('none')
      expect(await basisFor({ path: '', content: 'x' })).toBe('none')
      expect(await basisFor({ path: 'a.txt', content: 'x', mode: 1 })).toBe('none')
      expect(await basisFor('a.txt')).toBe('none')
      expect(await basisFor(null)).toBe('none')
    })

    it('is none when the path resolves outside the workspace', async () => {
      await symlink(ws.outside, at('out'))
      expect(await basisFor({ path: '../outside/secret.txt', content: 'x' })).toBe('none')
      expect(await basisFor({ path: path.join(ws.outside, 'secret.txt'), content: 'x' })).toBe('none')
      expect(await basisFor({ path: 'out/secret.txt', content: 'x' })).toBe('none')
    })

    it('is absent when nothing is at the path, in a missing folder or behind a dangling link', async () => {
      await symlink('target.txt', at('dangling'))
      expect(await basisFor({ path: 'new.txt', content: 'x' })).toBe('absent')
      expect(await basisFor({ path: 'a/b/new.txt', content: 'x' })).toBe('absent')
      expect(await basisFor({ path: 'dangling', content: 'x' })).toBe('absent')
    })

    it('is the SHA-256 of a regular file’s bytes, read through a link that stays inside', async () => {
      await writeFile(at('a.txt'), 'héllo\n')
      await writeFile(at('empty.txt'), '')
      await symlink('a.txt', at('link'))
      expect(await basisFor({ path: 'a.txt', content: 'x' })).toBe(sha256('héllo\n'))
      expect(await basisFor({ path: 'link', content: 'x' })).toBe(sha256('héllo\n'))
      expect(await basisFor({ path: 'empty.txt', content: 'x' })).toBe(sha256(''))
      expect(await basisFor({ path: 'a.txt', content: 'x' })).toMatch(/^sha256:[0-9a-f]{64}$/)
    })

    it('hashes a file of exactly 16 MiB and calls one byte more unhashable', async () => {
      expect(WRITE_FILE_HASH_CAP_BYTES).toBe(16 * 1024 * 1024)
      await givenFileOfSize(at('cap.bin'), WRITE_FILE_HASH_CAP_BYTES)
      await givenFileOfSize(at('over.bin'), WRITE_FILE_HASH_CAP_BYTES + 1)
      expect(await basisFor({ path: 'cap.bin', content: 'x' })).toBe(sha256(Buffer.alloc(WRITE_FILE_HASH_CAP_BYTES)))
      expect(await basisFor({ path: 'over.bin', content: 'x' })).toBe('unhashable')
    })

    it('is unhashable for a folder, a FIFO and a link loop', async () => {
      await mkdir(at('dir'))
      mkfifo(at('fifo'))
      await symlink('loop', at('loop'))
      expect(await basisFor({ path: 'dir', content: 'x' })).toBe('unhashable')
      expect(await basisFor({ path: 'fifo', content: 'x' })).toBe('unhashable')
      expect(await basisFor({ path: 'loop', content: 'x' })).toBe('unhashable')
    })

    it(`is ${runsAsRoot ? 'the hash (root reads it)' : 'unhashable'} for a file without read permission`, async () => {
      await writeFile(at('locked.txt'), 'locked')
      await chmod(at('locked.txt'), 0o000)
      expect(await basisFor({ path: 'locked.txt', content: 'x' })).toBe(runsAsRoot ? sha256('locked') : 'unhashable')
    })

    it('is unhashable when the workspace itself is gone', async () => {
      await rm(ws.root, { recursive: true })
      expect(await basisFor({ path: 'a.txt', content: 'x' })).toBe('unhashable')
    })
  })

  describe('probe', () => {
    describe('when the file holds the call’s content', () => {
      it('is applied, with exactly the result the call gives', async () => {
        const args = { path: 'notes/a.txt', content: 'héllo\n' }
        const basis = await basisFor(args)
        expect(basis).toBe('absent')
        const outcome = await writeFileTool.run(args, ws.context)
        expect(outcome.isError).toBe(false)
        expect(await probe(args, basis)).toEqual({ verdict: 'applied', output: outcome.result })
        expect(outcome.result).toEqual({ path: path.join('notes', 'a.txt'), bytes: 7 })
      })

      it('is applied over a previous file, and for empty content', async () => {
        await writeFile(at('a.txt'), 'old')
        const args = { path: 'a.txt', content: '' }
        const basis = await basisFor(args)
        await writeFileTool.run(args, ws.context)
        expect(await probe(args, basis)).toEqual({ verdict: 'applied', output: { path: 'a.txt', bytes: 0 } })
      })

      it('is applied whatever the basis, even unhashable or one it never gives', async () => {
        await writeFile(at('a.txt'), 'new')
        for (const basis of ['unhashable', 'none', 'absent', sha256('old'), 'garbage']) {
          expect(await probe({ path: 'a.txt', content: 'new' }, basis)).toEqual({
            verdict: 'applied',
            output: { path: 'a.txt', bytes: 3 },
          })
        }
      })
    })

    describe('when the file holds what the basis recorded', () => {
      it('is not_applied from absent (still nothing at the path)', async () => {
        const args = { path: 'a/new.txt', content: 'x' }
        expect(await probe(args, await basisFor(args))).toEqual({ verdict: 'not_applied' })
      })

      it('is not_applied from a hash (the same bytes)', async () => {
        await writeFile(at('a.txt'), 'old content')
        const args = { path: 'a.txt', content: 'new content' }
        expect(await probe(args, await basisFor(args))).toEqual({ verdict: 'not_applied' })
      })
    })

    describe('when the file holds something else', () => {
      it('is diverged for a half-written file', async () => {
        await writeFile(at('a.txt'), 'old content')
        const args = { path: 'a.txt', content: 'the new content of the file' }
        const basis = await basisFor(args)
        await writeFile(at('a.txt'), args.content.slice(0, 10))
        expect(await probe(args, basis)).toEqual({ verdict: 'diverged' })
      })

      it('is diverged for other content, from absent or from a hash', async () => {
        const fresh = { path: 'fresh.txt', content: 'mine' }
        const freshBasis = await basisFor(fresh)
        await writeFile(at('fresh.txt'), 'theirs')
        expect(await probe(fresh, freshBasis)).toEqual({ verdict: 'diverged' })

        await writeFile(at('old.txt'), 'old')
        const old = { path: 'old.txt', content: 'mine' }
        const oldBasis = await basisFor(old)
        await writeFile(at('old.txt'), 'theirs')
        expect(await probe(old, oldBasis)).toEqual({ verdict: 'diverged' })
      })

      it('is diverged when a hashed file is gone, and for a file past the cap from absent', async () => {
        await writeFile(at('old.txt'), 'old')
        const old = { path: 'old.txt', content: 'mine' }
        const basis = await basisFor(old)
        await unlink(at('old.txt'))
        expect(await probe(old, basis)).toEqual({ verdict: 'diverged' })

        const big = { path: 'big.bin', content: 'mine' }
        const bigBasis = await basisFor(big)
        await givenFileOfSize(at('big.bin'), WRITE_FILE_HASH_CAP_BYTES + 1)
        expect(await probe(big, bigBasis)).toEqual({ verdict: 'diverged' })
      })
    })

    describe('when the basis recorded nothing readable', () => {
      it('is unreadable for a folder at the path (basis unhashable)', async () => {
        await mkdir(at('dir'))
        const args = { path: 'dir', content: 'x' }
        const basis = await basisFor(args)
        expect(basis).toBe('unhashable')
        expect(await probe(args, basis)).toEqual({ verdict: 'unreadable' })
      })

      it('is unreadable for a file past the cap that stays there (basis unhashable)', async () => {
        await givenFileOfSize(at('big.bin'), WRITE_FILE_HASH_CAP_BYTES + 1)
        const args = { path: 'big.bin', content: 'x' }
        expect(await probe(args, await basisFor(args))).toEqual({ verdict: 'unreadable' })
      })

      it('is unreadable for a basis it never gives', async () => {
        expect(await probe({ path: 'a.txt', content: 'x' }, 'sha256:xyz')).toEqual({ verdict: 'unreadable' })
      })
    })

    describe('when the basis is none', () => {
      it('is not_applied while the args are still invalid', async () => {
        const args = { path: 'a.txt', content: 42 }
        const basis = await basisFor(args)
        expect(basis).toBe('none')
        expect(await probe(args, basis)).toEqual({ verdict: 'not_applied' })
      })

      it('is not_applied while the path still resolves outside the workspace', async () => {
        const args = { path: '../outside/secret.txt', content: 'x' }
        const basis = await basisFor(args)
        expect(basis).toBe('none')
        expect(await probe(args, basis)).toEqual({ verdict: 'not_applied' })
      })

      it('is unreadable once the path resolves inside the workspace', async () => {
        await symlink(ws.outside, at('out'))
        const args = { path: 'out/secret.txt', content: 'x' }
        const basis = await basisFor(args)
        expect(basis).toBe('none')
        await unlink(at('out'))
        await mkdir(at('out'))
        expect(await probe(args, basis)).toEqual({ verdict: 'unreadable' })
      })

      it('is unreadable for args that are invalid now but had a basis', async () => {
        expect(await probe({ path: 'a.txt' }, 'absent')).toEqual({ verdict: 'unreadable' })
        expect(await probe({ path: '../outside/secret.txt', content: 'x' }, 'absent')).toEqual({
          verdict: 'unreadable',
        })
      })
    })

    describe('when the target cannot be read now', () => {
      it('is unreadable for a link loop at the path (ELOOP)', async () => {
        const args = { path: 'a.txt', content: 'x' }
        const basis = await basisFor(args)
        expect(basis).toBe('absent')
        await symlink('a.txt', at('a.txt'))
        expect(await probe(args, basis)).toEqual({ verdict: 'unreadable' })
      })

      it('is unreadable for a FIFO or a folder where the basis saw a file', async () => {
        await writeFile(at('a.txt'), 'old')
        const args = { path: 'a.txt', content: 'x' }
        const basis = await basisFor(args)
        await unlink(at('a.txt'))
        mkfifo(at('a.txt'))
        expect(await probe(args, basis)).toEqual({ verdict: 'unreadable' })
        await unlink(at('a.txt'))
        await mkdir(at('a.txt'))
        expect(await probe(args, basis)).toEqual({ verdict: 'unreadable' })
      })

      it(`is ${runsAsRoot ? 'read anyway as root' : 'unreadable'} for a file without read permission`, async () => {
        await writeFile(at('a.txt'), 'old')
        const args = { path: 'a.txt', content: 'new' }
        const basis = await basisFor(args)
        await chmod(at('a.txt'), 0o000)
        expect(await probe(args, basis)).toEqual({ verdict: runsAsRoot ? 'not_applied' : 'unreadable' })
        await writeFile(at('a.txt'), 'new')
        expect(await probe(args, basis)).toEqual(
          runsAsRoot ? { verdict: 'applied', output: { path: 'a.txt', bytes: 3 } } : { verdict: 'unreadable' },
        )
      })

      it('is unreadable for content past the cap in a file past the cap', async () => {
        const content = 'a'.repeat(WRITE_FILE_HASH_CAP_BYTES + 1)
        const args = { path: 'big.txt', content }
        const basis = await basisFor(args)
        await writeFile(at('big.txt'), content)
        expect(await probe(args, basis)).toEqual({ verdict: 'unreadable' })
      })

      it('is diverged for a hashed file that grew past the cap, without reading it', async () => {
        const handle = await open(at('grow.bin'), 'w')
        await handle.close()
        const args = { path: 'grow.bin', content: 'x' }
        const basis = await basisFor(args)
        await givenFileOfSize(at('grow.bin'), WRITE_FILE_HASH_CAP_BYTES * 2)
        expect(await probe(args, basis)).toEqual({ verdict: 'diverged' })
      })
    })
  })

  describe('basis, then the write or no write', () => {
    it('is applied after an atomic write, and not_applied without one unless the bytes already match (or refused)', async () => {
      let n = 0
      await fc.assert(
        fc.asyncProperty(
          fc.string({ unit: 'binary', maxLength: 64 }),
          fc.option(fc.string({ unit: 'binary', maxLength: 64 }), { nil: undefined }),
          fc.boolean(),
          async (content, before, write) => {
            n += 1
            const args = { path: `p/${n}.txt`, content }
            if (before !== undefined) {
              await mkdir(at('p'), { recursive: true })
              await writeFile(at(args.path), before)
            }
            // write_file refuses a NUL in its content: the basis is none, the write an error, nothing applied.
            const refused = content.includes('\0')
            const basis = await basisFor(args)
            expect(basis === 'none').toBe(refused)
            if (write) expect((await writeFileTool.run(args, ws.context)).isError).toBe(refused)
            const same = before !== undefined && Buffer.from(before).equals(Buffer.from(content))
            const expected: ProbeVerdict =
              !refused && (write || same)
                ? {
                    verdict: 'applied',
                    output: { path: path.join('p', `${n}.txt`), bytes: Buffer.byteLength(content) },
                  }
                : { verdict: 'not_applied' }
            expect(await probe(args, basis)).toEqual(expected)
          },
        ),
        { numRuns: 200 },
      )
    })
  })
})
