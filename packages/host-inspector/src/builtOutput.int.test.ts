import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url))

describe('built output', () => {
  describe('when imported by plain node (no vitest, no tsx)', () => {
    // vitest resolves imports that plain node rejects (e.g. 'fp-ts/TaskEither'); only node itself proves the build.
    it('loads and answers', async () => {
      expect(existsSync(dist), `run the build first: ${dist} is missing`).toBe(true)
      const script = `
        const m = await import(${JSON.stringify(dist)})
        const cwd = await m.canonicalCwd('/')()
        const alive = await m.isSameLiveProcess(process.pid, (await m.currentProcessStartTime()).toISOString())
        console.log(JSON.stringify({ cwd, alive }))
      `
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])
      expect(JSON.parse(stdout)).toEqual({ cwd: { _tag: 'Right', right: '/' }, alive: true })
    })
  })
})
