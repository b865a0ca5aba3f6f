/**
 * The code cache of the hot commands' bundles (`src/loadCommandBundle.ts`): written beside a bundle
 * by its first run, reused (never rewritten) by the next, rewritten once by a run down a code path it
 * has not seen, never applied to code it was not made from, and harmless when damaged. Each load
 * runs in its own `node` process, as `maka` does.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CLI, cliEnv } from './support.js'

const LOADER = fileURLToPath(new URL('../dist/loadCommandBundle.js', import.meta.url))
const EXIT_CODE = fileURLToPath(new URL('../dist/ExitCode.js', import.meta.url))
const CODE_PATHS = fileURLToPath(new URL('../dist/codePaths.js', import.meta.url))

// A bundle shaped like the bundler's: CommonJS, requiring the program's ExitCode module.
const bundleSource = (answer: string): string =>
  [
    '"use strict";',
    'const { BadInputError } = require("./ExitCode.js");',
    `const answer = () => ${JSON.stringify(answer)};`,
    'module.exports = { answer, BadInputError, nodePath: require("node:path").sep };',
    '',
  ].join('\n')

// Loads the bundle in a fresh process, which then notes the code paths `paths` as a command would;
// prints what it exports and whether its error class is the program's.
const load = (bundle: string, paths: ReadonlyArray<string> = []): string => {
  const script = [
    `const { loadCommandBundle } = await import(${JSON.stringify(LOADER)})`,
    `const { BadInputError } = await import(${JSON.stringify(EXIT_CODE)})`,
    `const { noteCodePath } = await import(${JSON.stringify(CODE_PATHS)})`,
    `const m = loadCommandBundle(${JSON.stringify(bundle)})`,
    `for (const path of ${JSON.stringify(paths)}) noteCodePath(path)`,
    'console.log(JSON.stringify({ answer: m.answer(), sameClass: m.BadInputError === BadInputError, sep: m.nodePath }))',
  ].join('\n')
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  expect(child.stderr).toBe('')
  expect(child.status).toBe(0)
  return child.stdout.trim()
}

const cachesIn = async (dir: string): Promise<ReadonlyArray<string>> =>
  (await readdir(dir)).filter((name) => name.endsWith('.v8cache'))

// The code paths a cache file names on its first line.
const pathsOf = async (file: string): Promise<unknown> => {
  const text = (await readFile(file)).toString('latin1')
  const line = text.slice(0, text.indexOf('\n'))
  expect(line.startsWith('maka-code-cache/1 ')).toBe(true)
  return JSON.parse(line.slice('maka-code-cache/1 '.length))
}

describe('a command bundle loaded through the code cache', () => {
  let dir: string
  let bundle: string

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'maka-code-cache-'))
    bundle = join(dir, 'command-TEST.js')
    await writeFile(bundle, bundleSource('first'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('runs the bundle, with the program’s own ExitCode module and node’s require', async () => {
    expect(JSON.parse(load(bundle))).toEqual({ answer: 'first', sameClass: true, sep: '/' })
  })

  it('writes the cache beside the bundle on the first run and reuses it untouched on the next', async () => {
    expect(await cachesIn(dir)).toEqual([])
    load(bundle)
    const [cache] = await cachesIn(dir)
    expect(cache).toBeDefined()
    const written = await stat(join(dir, cache!))
    expect(written.size).toBeGreaterThan(0)

    expect(JSON.parse(load(bundle)).answer).toBe('first')
    const after = await stat(join(dir, cache!))
    expect(after.ino).toBe(written.ino)
    expect(after.mtimeMs).toBe(written.mtimeMs)
    expect(await cachesIn(dir)).toEqual([cache])
  })

  it('is rewritten once by a run down a code path it lacks, and keeps the paths it had', async () => {
    load(bundle)
    const [cache] = await cachesIn(dir)
    const file = join(dir, cache!)
    expect(await pathsOf(file)).toEqual([])
    const first = await stat(file)

    // A run down a path the cache has not seen compiled code the cache lacks: it is rewritten.
    expect(JSON.parse(load(bundle, ['tool-journal'])).answer).toBe('first')
    const second = await stat(file)
    expect(second.ino).not.toBe(first.ino)
    expect(await pathsOf(file)).toEqual(['tool-journal'])
    // V8 takes the rewritten cache: the next run, down the same path or none, leaves it alone.
    load(bundle, ['tool-journal'])
    load(bundle)
    expect((await stat(file)).ino).toBe(second.ino)

    // Another path adds to the ones it had.
    load(bundle, ['other'])
    expect((await stat(file)).ino).not.toBe(second.ino)
    expect(await pathsOf(file)).toEqual(['other', 'tool-journal'])
    expect(await cachesIn(dir)).toEqual([cache])
  })

  it('replaces a cache without its first line, as a bundle of an older maka left it', async () => {
    load(bundle)
    const [cache] = await cachesIn(dir)
    const file = join(dir, cache!)
    const withHeader = await readFile(file)
    await writeFile(file, withHeader.subarray(withHeader.indexOf(0x0a) + 1))

    expect(JSON.parse(load(bundle)).answer).toBe('first')
    expect(await pathsOf(file)).toEqual([])
  })

  it('never runs a cache against a bundle edited in place, even at the same length', async () => {
    load(bundle)
    const [before] = await cachesIn(dir)
    // Same length, other code: V8 alone would take the old cache for it.
    await new Promise((done) => setTimeout(done, 20))
    await writeFile(bundle, bundleSource('other'))
    expect(bundleSource('other').length).toBe(bundleSource('first').length)

    expect(JSON.parse(load(bundle)).answer).toBe('other')
    expect(await cachesIn(dir)).toContain(before)
    expect((await cachesIn(dir)).length).toBe(2)
  })

  it('runs the bundle as usual when the cache is damaged, and replaces the cache', async () => {
    load(bundle)
    const [cache] = await cachesIn(dir)
    await writeFile(join(dir, cache!), 'not a code cache')

    expect(JSON.parse(load(bundle)).answer).toBe('first')
    expect((await stat(join(dir, cache!))).size).toBeGreaterThan('not a code cache'.length)
  })
})

describe('the built maka', () => {
  it('keeps the code cache of a command it ran beside that command’s bundle', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'maka-code-cache-data-'))
    try {
      const child = spawnSync(process.execPath, [CLI, 'sessions', '--data-dir', dataDir], {
        env: cliEnv(false),
        encoding: 'utf8',
      })
      expect(child.status).toBe(0)
      const chunks = fileURLToPath(new URL('../dist/chunks/', import.meta.url))
      const names = await readdir(chunks)
      const bundle = names.find((name) => /^sessions-\w+\.js$/.test(name))
      expect(bundle).toBeDefined()
      expect(names.some((name) => name.startsWith(`${bundle!}.`) && name.endsWith('.v8cache'))).toBe(true)
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
