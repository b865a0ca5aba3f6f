import { execFileSync } from 'node:child_process'
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeListDirTool, makeReadFileTool, makeWriteFileTool, READ_FILE_CAP_BYTES } from '../src/index.js'
import { givenWorkspaceUnsafe, type Workspace } from './givenWorkspace.js'

const readFileTool = makeReadFileTool()
const writeFileTool = makeWriteFileTool()
const listDirTool = makeListDirTool()

describe('file tools', () => {
  let ws: Workspace
  beforeEach(async () => {
    ws = await givenWorkspaceUnsafe()
  })
  afterEach(async () => {
    await ws.cleanup()
  })

  describe('when writing, reading and listing inside the workspace', () => {
    it('round-trips a file', async () => {
      const written = await writeFileTool.run({ path: 'notes.md', content: 'héllo\n' }, ws.context)
      expect(written).toEqual({ result: { path: 'notes.md', bytes: 7 }, isError: false })
      expect(await readFileTool.run({ path: 'notes.md' }, ws.context)).toEqual({ result: 'héllo\n', isError: false })
    })

    it('creates missing parent folders', async () => {
      const written = await writeFileTool.run({ path: 'a/b/c/deep.txt', content: 'x' }, ws.context)
      expect(written).toEqual({ result: { path: 'a/b/c/deep.txt', bytes: 1 }, isError: false })
      expect(await readFile(path.join(ws.root, 'a/b/c/deep.txt'), 'utf8')).toBe('x')
    })

    it('overwrites an existing file and accepts empty content', async () => {
      await writeFileTool.run({ path: 'f.txt', content: 'long old content' }, ws.context)
      expect(await writeFileTool.run({ path: 'f.txt', content: '' }, ws.context)).toMatchObject({ isError: false })
      expect(await readFile(path.join(ws.root, 'f.txt'), 'utf8')).toBe('')
    })

    it('lists entries sorted, with a trailing "/" on folders', async () => {
      await writeFileTool.run({ path: 'b.txt', content: '' }, ws.context)
      await writeFileTool.run({ path: 'A.txt', content: '' }, ws.context)
      await writeFileTool.run({ path: 'dir/inner.txt', content: '' }, ws.context)
      expect(await listDirTool.run({}, ws.context)).toEqual({ result: ['A.txt', 'b.txt', 'dir/'], isError: false })
      expect(await listDirTool.run(undefined, ws.context)).toEqual({
        result: ['A.txt', 'b.txt', 'dir/'],
        isError: false,
      })
      expect(await listDirTool.run({ path: 'dir' }, ws.context)).toEqual({ result: ['inner.txt'], isError: false })
    })

    it('truncates a large file with a note', async () => {
      await writeFile(path.join(ws.root, 'big.txt'), 'x'.repeat(READ_FILE_CAP_BYTES + 10))
      const outcome = await readFileTool.run({ path: 'big.txt' }, ws.context)
      expect(outcome.isError).toBe(false)
      const text = outcome.result as string
      expect(text.startsWith('x'.repeat(READ_FILE_CAP_BYTES))).toBe(true)
      expect(text).toMatch(
        new RegExp(`\\[truncated: showing the first ${READ_FILE_CAP_BYTES} of ${READ_FILE_CAP_BYTES + 10} bytes\\]$`),
      )
    })

    it('reports the workspace-relative path when given an absolute one', async () => {
      const written = await writeFileTool.run({ path: path.join(ws.root, 'abs.txt'), content: 'a' }, ws.context)
      expect(written).toEqual({ result: { path: 'abs.txt', bytes: 1 }, isError: false })
    })
  })

  describe('when a path leaves the workspace', () => {
    const escapes = (ws: Workspace): ReadonlyArray<readonly [string, string]> => [
      ['a ".." path', '../outside/pwned.txt'],
      ['an absolute path outside', path.join(ws.outside, 'pwned.txt')],
      ['a path through a symlink pointing outside', 'escape/pwned.txt'],
      ['a dangling symlink pointing outside', 'dangling'],
      ['a symlink to an outside file', 'secret-link'],
    ]

    beforeEach(async () => {
      await symlink(ws.outside, path.join(ws.root, 'escape'))
      await symlink(path.join(ws.outside, 'pwned.txt'), path.join(ws.root, 'dangling'))
      await symlink(path.join(ws.outside, 'secret.txt'), path.join(ws.root, 'secret-link'))
    })

    it('write_file refuses each with an error outcome and writes nothing outside', async () => {
      const before = await ws.snapshotOutside()
      for (const [what, requested] of escapes(ws)) {
        const outcome = await writeFileTool.run({ path: requested, content: 'pwned' }, ws.context)
        expect(outcome, what).toEqual({ result: `Refused: "${requested}" is outside the workspace.`, isError: true })
      }
      expect(await ws.snapshotOutside()).toBe(before)
    })

    it('write_file creates no folders outside through a symlinked parent', async () => {
      const before = await ws.snapshotOutside()
      const outcome = await writeFileTool.run({ path: 'escape/new/dir/f.txt', content: 'pwned' }, ws.context)
      expect(outcome.isError).toBe(true)
      expect(await ws.snapshotOutside()).toBe(before)
    })

    it('read_file and list_dir refuse to look outside', async () => {
      for (const requested of ['../outside/secret.txt', path.join(ws.outside, 'secret.txt'), 'secret-link']) {
        const outcome = await readFileTool.run({ path: requested }, ws.context)
        expect(outcome, requested).toEqual({
          result: `Refused: "${requested}" is outside the workspace.`,
          isError: true,
        })
      }
      for (const requested of ['..', ws.outside, 'escape']) {
        expect((await listDirTool.run({ path: requested }, ws.context)).isError, requested).toBe(true)
      }
    })
  })

  describe('when the file system says no', () => {
    it('turns a missing file, a folder read and a folder listed as a file into sentences', async () => {
      await mkdir(path.join(ws.root, 'folder'))
      await writeFile(path.join(ws.root, 'file.txt'), 'x')
      expect(await readFileTool.run({ path: 'nope.txt' }, ws.context)).toEqual({
        result: 'Could not read "nope.txt": no such file or directory.',
        isError: true,
      })
      expect(await readFileTool.run({ path: 'folder' }, ws.context)).toEqual({
        result: 'Could not read "folder": it is a directory.',
        isError: true,
      })
      expect(await listDirTool.run({ path: 'file.txt' }, ws.context)).toEqual({
        result: 'Could not list "file.txt": a part of the path is not a directory.',
        isError: true,
      })
      expect(await writeFileTool.run({ path: 'file.txt/inner.txt', content: '' }, ws.context)).toMatchObject({
        isError: true,
      })
    })
  })

  describe('when the path names something that is not a regular file', () => {
    it('answers for a FIFO at once instead of waiting for a writer', async () => {
      execFileSync('mkfifo', [path.join(ws.root, 'pipe')])
      expect(await readFileTool.run({ path: 'pipe' }, ws.context)).toEqual({
        result: 'Could not read "pipe": it is not a regular file.',
        isError: true,
      })
    })
  })

  describe('when the arguments are wrong', () => {
    it.each([
      ['read_file', readFileTool, {}, 'read_file needs "path".'],
      ['read_file', readFileTool, { path: 3 }, 'read_file needs "path" to be a non-empty string.'],
      ['read_file', readFileTool, { path: '' }, 'read_file needs "path" to be a non-empty string.'],
      ['read_file', readFileTool, 'notes.md', 'read_file needs its arguments as a JSON object.'],
      ['read_file', readFileTool, { path: 'a\0b' }, 'read_file needs "path" without NUL characters.'],
      ['read_file', readFileTool, { file: 'a' }, 'read_file does not take "file"; it takes "path".'],
      ['write_file', writeFileTool, { path: 'a.txt' }, 'write_file needs "content".'],
      ['write_file', writeFileTool, { path: 'a.txt', content: 1 }, 'write_file needs "content" to be a string.'],
      ['write_file', writeFileTool, null, 'write_file needs its arguments as a JSON object.'],
      ['list_dir', listDirTool, { path: false }, 'list_dir needs "path" to be a non-empty string.'],
      ['list_dir', listDirTool, [], 'list_dir needs its arguments as a JSON object.'],
    ])('%s answers %j with a sentence', async (_, tool, args, sentence) => {
      expect(await tool.run(args, ws.context)).toEqual({ result: sentence, isError: true })
    })

    it('writes nothing for bad arguments', async () => {
      await writeFileTool.run({ path: 'a.txt', content: 42 }, ws.context)
      expect(await listDirTool.run({}, ws.context)).toEqual({ result: [], isError: false })
    })
  })
})
