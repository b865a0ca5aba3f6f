/**
 * The two real ports: `syncStoreFs` (decision 68), node's synchronous calls behind the port's
 * promises, and `nodeStoreFs` (decision 287), the same calls with only what waits on the disk in the
 * thread pool. A failure is a rejection carrying the same errno as `fs/promises`, and a closed file
 * never reaches a descriptor number the process may have reused.
 */
import { constants } from 'node:fs'
import { mkdtemp, open, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { nodeStoreFs, type StoreFs, syncStoreFs } from '../src/index.js'

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

describe.each<[string, StoreFs]>([
  ['syncStoreFs', syncStoreFs],
  ['nodeStoreFs', nodeStoreFs],
])('%s', (_name, port) => {
  it('writes, syncs, reads back and stats a file as the fs/promises port does', async () => {
    const root = await tempRoot()
    const path = join(root, 'rows.jsonl')
    const file = await port.open(path, constants.O_CREAT | constants.O_EXCL | constants.O_RDWR, 0o600)
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
    for (const flags of [constants.O_RDONLY, constants.O_WRONLY | constants.O_CREAT]) {
      const [ours, promises] = [
        await rejection(() => port.open(missing, flags, 0o600)),
        await rejection(() => open(missing, flags, 0o600)),
      ]
      expect(ours.code).toBe('ENOENT')
      expect(ours.code).toBe(promises.code)
      expect(ours.syscall).toBe('open')
    }
    await port.mkdir(join(root, 'd'), 0o700)
    expect((await rejection(() => port.mkdir(join(root, 'd'), 0o700))).code).toBe('EEXIST')
    expect((await rejection(() => port.lstat(missing))).code).toBe('ENOENT')
  })

  it('lists, links, renames and unlinks entries', async () => {
    const root = await tempRoot()
    const file = await port.open(join(root, 'a'), constants.O_CREAT | constants.O_WRONLY, 0o600)
    await file.close()
    await port.link(join(root, 'a'), join(root, 'b'))
    expect((await rejection(() => port.link(join(root, 'a'), join(root, 'b')))).code).toBe('EEXIST')
    await port.rename(join(root, 'b'), join(root, 'c'))
    await port.unlink(join(root, 'a'))
    const names = (await port.readdir(root)).map((entry) => entry.name)
    expect(names).toEqual(['c'])
    expect((await port.lstat(join(root, 'c'))).isDirectory()).toBe(false)
    expect(await port.realpath(join(root, '.', 'c'))).toBe(join(await realpath(root), 'c'))
  })

  it('refuses every call on a closed file (EBADF) and closes once', async () => {
    const root = await tempRoot()
    const file = await port.open(join(root, 'a'), constants.O_CREAT | constants.O_RDWR, 0o600)
    await file.close()
    // Another open may now hold the same descriptor number: a stale call must not touch it.
    const other = await port.open(join(root, 'b'), constants.O_CREAT | constants.O_RDWR, 0o600)
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
