/**
 * `syncStoreFs` (decision 68): node's synchronous calls behind the port's promises. A failure is a
 * rejection carrying the same errno as `fs/promises`, and a closed file never reaches a descriptor
 * number the process may have reused.
 */
import { constants } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { nodeStoreFs, syncStoreFs } from '../src/index.js'

const roots: Array<string> = []
afterAll(() => Promise.all(roots.map((root) => rm(root, { recursive: true, force: true }))))
const tempRoot = async (): Promise<string> => {
  const root = await mkdtemp(join(tmpdir(), 'maka-sync-fs-'))
  roots.push(root)
  return root
}

const rejection = async (call: () => Promise<unknown>): Promise<NodeJS.ErrnoException> => {
  try {
    await call()
  } catch (error) {
    return error as NodeJS.ErrnoException
  }
  throw new Error('the call did not fail')
}

describe('syncStoreFs', () => {
  it('writes, syncs, reads back and stats a file as the fs/promises port does', async () => {
    const root = await tempRoot()
    const path = join(root, 'rows.jsonl')
    const file = await syncStoreFs.open(path, constants.O_CREAT | constants.O_EXCL | constants.O_RDWR, 0o600)
    const bytes = Buffer.from('{"a":1}\n')
    expect(await file.write(bytes, 0, bytes.length)).toEqual({ bytesWritten: bytes.length })
    await file.sync()
    const stat = await file.stat()
    expect(stat.size).toBe(bytes.length)
    expect(stat.mode & 0o777).toBe(0o600)
    const back = Buffer.alloc(bytes.length)
    expect(await file.read(back, 0, back.length, 0)).toEqual({ bytesRead: bytes.length })
    expect(back.equals(bytes)).toBe(true)
    await file.truncate(3)
    await file.close()
    expect(await readFile(path, 'utf8')).toBe('{"a')
  })

  it('rejects with the errno fs/promises gives, for a missing file and an existing one', async () => {
    const root = await tempRoot()
    const missing = join(root, 'missing', 'file')
    const [sync, promises] = [
      await rejection(() => syncStoreFs.open(missing, constants.O_RDONLY)),
      await rejection(() => nodeStoreFs.open(missing, constants.O_RDONLY)),
    ]
    expect(sync.code).toBe('ENOENT')
    expect(sync.code).toBe(promises.code)
    expect(sync.syscall).toBe('open')
    await syncStoreFs.mkdir(join(root, 'd'), 0o700)
    expect((await rejection(() => syncStoreFs.mkdir(join(root, 'd'), 0o700))).code).toBe('EEXIST')
    expect((await rejection(() => syncStoreFs.lstat(missing))).code).toBe('ENOENT')
  })

  it('lists, links, renames and unlinks entries', async () => {
    const root = await tempRoot()
    const file = await syncStoreFs.open(join(root, 'a'), constants.O_CREAT | constants.O_WRONLY, 0o600)
    await file.close()
    await syncStoreFs.link(join(root, 'a'), join(root, 'b'))
    expect((await rejection(() => syncStoreFs.link(join(root, 'a'), join(root, 'b')))).code).toBe('EEXIST')
    await syncStoreFs.rename(join(root, 'b'), join(root, 'c'))
    await syncStoreFs.unlink(join(root, 'a'))
    const names = (await syncStoreFs.readdir(root)).map((entry) => entry.name)
    expect(names).toEqual(['c'])
    expect((await syncStoreFs.lstat(join(root, 'c'))).isDirectory()).toBe(false)
    expect(await syncStoreFs.realpath(join(root, '.', 'c'))).toBe(await nodeStoreFs.realpath(join(root, 'c')))
  })

  it('refuses every call on a closed file (EBADF) and closes once', async () => {
    const root = await tempRoot()
    const file = await syncStoreFs.open(join(root, 'a'), constants.O_CREAT | constants.O_RDWR, 0o600)
    await file.close()
    // Another open may now hold the same descriptor number: a stale call must not touch it.
    const other = await syncStoreFs.open(join(root, 'b'), constants.O_CREAT | constants.O_RDWR, 0o600)
    const bytes = Buffer.from('x')
    expect((await rejection(() => file.write(bytes, 0, 1))).code).toBe('EBADF')
    expect((await rejection(() => file.sync())).code).toBe('EBADF')
    expect((await rejection(() => file.stat())).code).toBe('EBADF')
    await file.close()
    expect((await other.stat()).size).toBe(0)
    await other.close()
    expect(await readFile(join(root, 'b'), 'utf8')).toBe('')
  })
})
