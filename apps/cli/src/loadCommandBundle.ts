/**
 * Loads the self-contained bundle of a command (`scripts/bundle.mjs`) through V8's code cache.
 *
 * A cold `maka resume` spent about as long compiling its code (parsing the bundle, then compiling
 * every function the first time it runs) as doing its work. Node 20 has no compile cache for ES
 * modules (`module.enableCompileCache` arrived in Node 22), so the hot commands are bundled as
 * CommonJS and compiled here with `vm.Script`: the first run of a bundle writes V8's cache of the
 * code it compiled beside it, and every later run starts from that bytecode.
 *
 * Why it is safe: the bundle's file name carries a hash of its content and the cache's name adds the
 * file's inode, size and modification time, the Node version and the architecture, so a cache only
 * ever meets the exact code it was made from (V8 itself only compares the source's length); V8
 * rejects a cache made by another V8 or with other flags, and the code is then compiled as
 * usual (and the cache rewritten). The cache lives beside the code, never in a shared folder: only
 * who can change the code can change it. A cache that cannot be written (a read-only install) is
 * skipped; a write is a temporary file renamed into place, so a killed process never leaves half a
 * cache.
 *
 * Which code a cache holds depends on the run that wrote it, so a cache names the code paths that
 * run took (`noteCodePath`), and a later run that took one it lacks rewrites it at exit. The new
 * cache holds the old one's functions and the new run's, so the paths only ever accumulate, and a
 * cache is rewritten at most once per path.
 */
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Script } from 'node:vm'
import { notedCodePaths } from './codePaths.js'
import * as exitCodes from './ExitCode.js'

/**
 * The file a bundle's code cache is kept in.
 * @category constructors
 */
export const codeCachePath = (bundle: string): string => {
  // The file's identity, so a bundle edited in place (same name, same length) never meets the old cache.
  const { ino, size, mtimeMs } = statSync(bundle)
  return `${bundle}.${ino}-${size}-${Math.trunc(mtimeMs)}.${process.version}-${process.arch}.v8cache`
}

const readOrUndefined = (path: string): Buffer | undefined => {
  try {
    return readFileSync(path)
  } catch {
    return undefined
  }
}

// A cache file: this line, the JSON array of the code paths its run took, spaces up to a multiple of
// 16 bytes (V8 copies cache data that is not pointer-aligned), a newline, then V8's bytes.
const CACHE_MAGIC = 'maka-code-cache/1 '
const MAX_HEADER_BYTES = 4096

interface CodeCache {
  readonly paths: ReadonlySet<string>
  readonly data: Buffer
}

const readCodeCache = (file: Buffer): CodeCache | undefined => {
  if (file.toString('latin1', 0, CACHE_MAGIC.length) !== CACHE_MAGIC) return undefined
  const end = file.indexOf(0x0a, CACHE_MAGIC.length)
  if (end < 0 || end >= MAX_HEADER_BYTES) return undefined
  let paths: unknown
  try {
    paths = JSON.parse(file.toString('utf8', CACHE_MAGIC.length, end))
  } catch {
    return undefined
  }
  if (!Array.isArray(paths) || !paths.every((path): path is string => typeof path === 'string')) return undefined
  return { paths: new Set(paths), data: file.subarray(end + 1) }
}

const codeCacheFile = (paths: ReadonlySet<string>, data: Buffer): Buffer => {
  const line = `${CACHE_MAGIC}${JSON.stringify([...paths].sort())}`
  const pad = (16 - ((Buffer.byteLength(line) + 1) % 16)) % 16
  return Buffer.concat([Buffer.from(`${line}${' '.repeat(pad)}\n`, 'utf8'), data])
}

const writeAtomically = (path: string, data: Buffer): void => {
  const temporary = `${path}.${process.pid}.tmp`
  try {
    writeFileSync(temporary, data, { mode: 0o644 })
    renameSync(temporary, path)
  } catch {
    // A cache is an optimisation: a folder we cannot write only costs the next start its compile.
    rmSync(temporary, { force: true })
  }
}

/**
 * Runs a command bundle (CommonJS) and returns its exports. Its `require('./ExitCode.js')` is the
 * program's own module, so the error classes the program checks with `instanceof` are one.
 * @category constructors
 */
export const loadCommandBundle = (bundle: string): Record<string, unknown> => {
  const source = readFileSync(bundle, 'utf8')
  const cacheFile = codeCachePath(bundle)
  const file = readOrUndefined(cacheFile)
  const cached = file === undefined ? undefined : readCodeCache(file)
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle,
    ...(cached === undefined ? {} : { cachedData: cached.data }),
  })
  // Only the names are kept past this point: the cache's bytes are V8's now, and a long-lived host
  // need not hold them.
  const cachedPaths = cached !== undefined && script.cachedDataRejected !== true ? cached.paths : undefined
  // Written at exit, so the cache also holds every function this run compiled, not only the top level;
  // and rewritten by a run down a path the cache has not seen, whose functions it therefore lacks.
  process.once('exit', () => {
    const ran = notedCodePaths()
    if (cachedPaths !== undefined && [...ran].every((path) => cachedPaths.has(path))) return
    const paths = new Set([...(cachedPaths ?? []), ...ran])
    writeAtomically(cacheFile, codeCacheFile(paths, script.createCachedData()))
  })
  const nodeRequire = createRequire(bundle)
  const bundleRequire = Object.assign(
    (id: string): unknown => (id === './ExitCode.js' ? exitCodes : nodeRequire(id)),
    nodeRequire,
  )
  const loaded = { exports: {} as Record<string, unknown> }
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: unknown,
    module: unknown,
    filename: string,
    dirname: string,
  ) => void
  wrapper(loaded.exports, bundleRequire, loaded, bundle, dirname(bundle))
  if (Object.keys(loaded.exports).length === 0)
    throw new Error(`the command bundle ${basename(bundle)} exports nothing`)
  return loaded.exports
}

/**
 * {@link loadCommandBundle} for a bundle of `dist/chunks/`, named as the bundler wrote it.
 * @category constructors
 */
export const loadChunk = (name: string): Record<string, unknown> =>
  loadCommandBundle(fileURLToPath(new URL(`./chunks/${name}`, import.meta.url)))
