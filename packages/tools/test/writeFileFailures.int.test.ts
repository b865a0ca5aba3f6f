import { constants } from 'node:fs'
import type * as FsPromises from 'node:fs/promises'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { makeWriteFileTool } from '../src/index.js'
import { givenWorkspaceUnsafe, type Workspace } from './givenWorkspace.js'

type Step = 'open' | 'chmod' | 'write' | 'fsync' | 'close' | 'rename' | 'fsync-folder'

// The one step that fails next, and how; the real file system does everything else.
const fault = vi.hoisted(() => ({ step: undefined as Step | undefined, code: 'EIO' }))

const injected = (code: string): Error => Object.assign(new Error(`injected ${code}`), { code })

// A real full disk or dying disk cannot be summoned in a test; this fails one step of the real calls.
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>()
  const isTemp = (p: unknown): boolean => typeof p === 'string' && p.endsWith('.write_file.tmp')
  const open = async (...args: Parameters<typeof real.open>): ReturnType<typeof real.open> => {
    const [p, flags] = args
    const isFolder = typeof flags === 'number' && (flags & constants.O_DIRECTORY) !== 0
    if (fault.step === 'open' && isTemp(p)) throw injected(fault.code)
    const handle = await real.open(...args)
    if (isTemp(p) && fault.step === 'chmod') handle.chmod = () => Promise.reject(injected(fault.code))
    if (isTemp(p) && fault.step === 'fsync') handle.sync = () => Promise.reject(injected(fault.code))
    if (isFolder && fault.step === 'fsync-folder') handle.sync = () => Promise.reject(injected(fault.code))
    if (isTemp(p) && fault.step === 'close') {
      const realClose = handle.close.bind(handle)
      handle.close = async () => {
        await realClose()
        throw injected(fault.code)
      }
    }
    if (isTemp(p) && fault.step === 'write') {
      // Half the bytes reach the temp file before the disk fills up.
      handle.writeFile = async (data) => {
        const bytes = Buffer.from(data as string)
        await handle.write(bytes.subarray(0, bytes.length >> 1))
        throw injected(fault.code)
      }
    }
    return handle
  }
  const rename = async (...args: Parameters<typeof real.rename>): Promise<void> => {
    if (fault.step === 'rename') throw injected(fault.code)
    return real.rename(...args)
  }
  return { ...real, default: { ...real, open, rename }, open, rename }
})

const writeFileTool = makeWriteFileTool()

describe('write_file', () => {
  let ws: Workspace
  beforeEach(async () => {
    ws = await givenWorkspaceUnsafe()
    fault.step = undefined
  })
  afterEach(async () => {
    fault.step = undefined
    await ws.cleanup()
  })

  describe('when a step of the replacement fails', () => {
    it.each<[Step, string, string]>([
      ['open', 'ENOSPC', 'no space left on the device'],
      ['chmod', 'EPERM', 'operation not permitted'],
      ['write', 'ENOSPC', 'no space left on the device'],
      ['fsync', 'EIO', 'EIO'],
      ['close', 'EIO', 'EIO'],
      ['rename', 'EACCES', 'permission denied'],
    ])('at %s (%s), keeps the old bytes, removes its temp file and says why', async (step, code, sentence) => {
      await writeFile(path.join(ws.root, 'f.txt'), 'old bytes')
      fault.step = step
      fault.code = code
      const outcome = await writeFileTool.run({ path: 'f.txt', content: 'new bytes '.repeat(1000) }, ws.context)
      expect(outcome).toEqual({ result: `Could not write "f.txt": ${sentence}.`, isError: true })
      expect(await readFile(path.join(ws.root, 'f.txt'), 'utf8')).toBe('old bytes')
      expect(await readdir(ws.root)).toEqual(['f.txt'])
    })

    it('leaves no file at all when the target did not exist', async () => {
      fault.step = 'write'
      fault.code = 'ENOSPC'
      const outcome = await writeFileTool.run({ path: 'dir/new.txt', content: 'new bytes' }, ws.context)
      expect(outcome).toEqual({ result: 'Could not write "dir/new.txt": no space left on the device.', isError: true })
      expect(await readdir(path.join(ws.root, 'dir'))).toEqual([])
    })
  })

  describe('when only the folder fsync after the rename fails', () => {
    it('says the write failed, though the new bytes are already in place', async () => {
      await writeFile(path.join(ws.root, 'f.txt'), 'old bytes')
      fault.step = 'fsync-folder'
      fault.code = 'EIO'
      const outcome = await writeFileTool.run({ path: 'f.txt', content: 'new bytes' }, ws.context)
      expect(outcome).toEqual({ result: 'Could not write "f.txt": EIO.', isError: true })
      expect(await readFile(path.join(ws.root, 'f.txt'), 'utf8')).toBe('new bytes')
      expect(await readdir(ws.root)).toEqual(['f.txt'])
    })

    it('ignores a file system that cannot fsync folders at all (EINVAL)', async () => {
      fault.step = 'fsync-folder'
      fault.code = 'EINVAL'
      const outcome = await writeFileTool.run({ path: 'f.txt', content: 'new bytes' }, ws.context)
      expect(outcome).toEqual({ result: { path: 'f.txt', bytes: 9 }, isError: false })
    })
  })

  describe('when nothing fails', () => {
    it('answers exactly as before and leaves only the target', async () => {
      await writeFile(path.join(ws.root, 'f.txt'), 'old bytes')
      const outcome = await writeFileTool.run({ path: 'f.txt', content: 'héllo\n' }, ws.context)
      expect(outcome).toEqual({ result: { path: 'f.txt', bytes: 7 }, isError: false })
      expect(await readFile(path.join(ws.root, 'f.txt'), 'utf8')).toBe('héllo\n')
      expect(await readdir(ws.root)).toEqual(['f.txt'])
    })
  })
})
