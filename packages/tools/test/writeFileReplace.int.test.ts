import { execFile, execFileSync } from 'node:child_process'
import { chmod, link, lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeWriteFileTool } from '../src/index.js'
import { givenWorkspaceUnsafe, type Workspace } from './givenWorkspace.js'

const writeFileTool = makeWriteFileTool()
const isRoot = process.getuid?.() === 0

const modeOf = async (file: string): Promise<number> => (await stat(file)).mode & 0o777

/** The pid of a process that has exited and been reaped. */
const deadPid = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const child = execFile(process.execPath, ['-e', ''], (error) =>
      error === null ? resolve(child.pid as number) : reject(error),
    )
  })

/**
 * Makes `path` (a folder: refuse new entries; a file: refuse writes), and returns how to undo it. Root
 * ignores permission bits, so as root the entry is made immutable instead (`chattr +i`).
 */
const freeze = (path: string, mode: string): (() => void) => {
  if (!isRoot) {
    execFileSync('chmod', [mode, path])
    return () => execFileSync('chmod', ['0755', path])
  }
  execFileSync('chattr', ['+i', path], { stdio: 'ignore' })
  return () => execFileSync('chattr', ['-i', path])
}

describe('write_file', () => {
  let ws: Workspace
  beforeEach(async () => {
    ws = await givenWorkspaceUnsafe()
  })
  afterEach(async () => {
    await ws.cleanup()
  })

  describe('when the target exists', () => {
    it('keeps its permission bits', async () => {
      const file = path.join(ws.root, 'run.sh')
      await writeFile(file, 'echo old\n')
      await chmod(file, 0o754)
      expect(await writeFileTool.run({ path: 'run.sh', content: 'echo new\n' }, ws.context)).toEqual({
        result: { path: 'run.sh', bytes: 9 },
        isError: false,
      })
      expect(await modeOf(file)).toBe(0o754)
      expect(await readFile(file, 'utf8')).toBe('echo new\n')
    })

    it('replaces the name, so another hard link to the old file keeps the old bytes', async () => {
      await writeFile(path.join(ws.root, 'f.txt'), 'old')
      await link(path.join(ws.root, 'f.txt'), path.join(ws.root, 'twin.txt'))
      await writeFileTool.run({ path: 'f.txt', content: 'new' }, ws.context)
      expect(await readFile(path.join(ws.root, 'f.txt'), 'utf8')).toBe('new')
      expect(await readFile(path.join(ws.root, 'twin.txt'), 'utf8')).toBe('old')
    })

    it('refuses a file the process may not write, as before, though rename could replace it', async () => {
      const file = path.join(ws.root, 'locked.txt')
      await writeFile(file, 'old')
      const thaw = freeze(file, '0444')
      try {
        const outcome = await writeFileTool.run({ path: 'locked.txt', content: 'new' }, ws.context)
        expect(outcome.isError).toBe(true)
        expect(outcome.result).toMatch(/^Could not write "locked\.txt": (permission denied|operation not permitted)\.$/)
        expect(await readFile(file, 'utf8')).toBe('old')
        expect(await readdir(ws.root)).toEqual(['locked.txt'])
      } finally {
        thaw()
      }
    })
  })

  describe('when the target is new', () => {
    it('gets the mode a plain new file gets under the same umask', async () => {
      await writeFile(path.join(ws.root, 'reference.txt'), '')
      await writeFileTool.run({ path: 'a/new.txt', content: 'x' }, ws.context)
      expect(await modeOf(path.join(ws.root, 'a/new.txt'))).toBe(await modeOf(path.join(ws.root, 'reference.txt')))
    })

    it('accepts a name so long that a temp name built on all of it would be too long', async () => {
      for (const name of ['a'.repeat(250), 'é'.repeat(127)]) {
        const outcome = await writeFileTool.run({ path: name, content: 'x' }, ws.context)
        expect(outcome, name).toEqual({ result: { path: name, bytes: 1 }, isError: false })
      }
      expect((await readdir(ws.root)).sort()).toEqual(['a'.repeat(250), 'é'.repeat(127)].sort())
    })
  })

  describe('when the path is a symlink inside the workspace', () => {
    it('writes the file it points to and leaves the link a link, as before', async () => {
      await writeFile(path.join(ws.root, 'real.txt'), 'old')
      await symlink('real.txt', path.join(ws.root, 'link.txt'))
      expect(await writeFileTool.run({ path: 'link.txt', content: 'new' }, ws.context)).toEqual({
        result: { path: 'real.txt', bytes: 3 },
        isError: false,
      })
      expect(await readlink(path.join(ws.root, 'link.txt'))).toBe('real.txt')
      expect(await readFile(path.join(ws.root, 'real.txt'), 'utf8')).toBe('new')
    })

    it('creates the missing file a dangling link points to, as before', async () => {
      await mkdir(path.join(ws.root, 'sub'))
      await symlink('sub/made.txt', path.join(ws.root, 'dangling.txt'))
      expect(await writeFileTool.run({ path: 'dangling.txt', content: 'new' }, ws.context)).toEqual({
        result: { path: 'sub/made.txt', bytes: 3 },
        isError: false,
      })
      expect((await lstat(path.join(ws.root, 'dangling.txt'))).isSymbolicLink()).toBe(true)
      expect(await readFile(path.join(ws.root, 'sub/made.txt'), 'utf8')).toBe('new')
    })
  })

  describe('when the target is not a regular file', () => {
    it('refuses a folder and leaves it as it was', async () => {
      await mkdir(path.join(ws.root, 'folder'))
      await writeFile(path.join(ws.root, 'folder/inner.txt'), 'kept')
      expect(await writeFileTool.run({ path: 'folder', content: 'x' }, ws.context)).toEqual({
        result: 'Could not write "folder": it is a directory.',
        isError: true,
      })
      expect(await readdir(path.join(ws.root, 'folder'))).toEqual(['inner.txt'])
      expect(await readdir(ws.root)).toEqual(['folder'])
    })

    it('refuses a FIFO at once instead of waiting for a reader or replacing it', async () => {
      execFileSync('mkfifo', [path.join(ws.root, 'pipe')])
      expect(await writeFileTool.run({ path: 'pipe', content: 'x' }, ws.context)).toEqual({
        result: 'Could not write "pipe": it is not a regular file.',
        isError: true,
      })
      expect((await lstat(path.join(ws.root, 'pipe'))).isFIFO()).toBe(true)
      expect(await readdir(ws.root)).toEqual(['pipe'])
    }, 15_000)
  })

  describe('when the folder refuses new entries', () => {
    it('refuses even a writable file in it, keeps the old bytes and leaves no temp file', async () => {
      const dir = path.join(ws.root, 'frozen')
      await mkdir(dir)
      await writeFile(path.join(dir, 'f.txt'), 'old')
      const thaw = freeze(dir, '0555')
      try {
        const outcome = await writeFileTool.run({ path: 'frozen/f.txt', content: 'new' }, ws.context)
        expect(outcome.isError).toBe(true)
        expect(outcome.result).toMatch(
          /^Could not write "frozen\/f\.txt": (permission denied|operation not permitted)\.$/,
        )
        expect(await readFile(path.join(dir, 'f.txt'), 'utf8')).toBe('old')
        expect(await readdir(dir)).toEqual(['f.txt'])
      } finally {
        thaw()
      }
    })
  })

  describe('when earlier writers left temp files behind', () => {
    it('removes the target’s temps whose writer is gone, and nothing else', async () => {
      const gone = await deadPid()
      const stale = `.f.txt.${gone}.0123456789ab.write_file.tmp`
      const live = `.f.txt.${process.pid}.0123456789ab.write_file.tmp`
      const otherTarget = `.g.txt.${gone}.0123456789ab.write_file.tmp`
      const lookalikes = [`.f.txt.${gone}.0123456789ab.tmp`, `.f.txt.${gone}.xyz.write_file.tmp`, 'f.txt.bak']
      for (const name of [stale, live, otherTarget, ...lookalikes]) await writeFile(path.join(ws.root, name), 'x')
      expect(await writeFileTool.run({ path: 'f.txt', content: 'new' }, ws.context)).toMatchObject({ isError: false })
      expect((await readdir(ws.root)).sort()).toEqual(['f.txt', live, otherTarget, ...lookalikes].sort())
    })
  })
})
