/**
 * Bundles the `maka` executable after `tsc` has type-checked and emitted the package: esbuild
 * replaces `dist/bin.js` with one file holding the program (commander included), and writes each
 * lazily imported command to `dist/chunks/`. The commands a user runs most (`sessions`, `show`,
 * `recover`, `resume`, `resume plan`, `run`) are each one self-contained file with exactly the code
 * they use (fp-ts, io-ts and @maka/* included), so a command loads two or three files. Code
 * splitting would share files between them, but esbuild assigns whole files to shared chunks, so
 * `maka sessions` would also load the planner and the executor it never calls; one file per command
 * costs disk, not start-up time. The other commands (chat, demo, chaos and their children) keep a
 * split build, so `maka chat` still loads its terminal UI (and ink, react) only when it opens it.
 * The classes the program checks with `instanceof` (`ExitCode.ts`) live in one shared file, so an
 * error thrown by any command is recognised by the program. ink, react and the OpenAI client stay
 * external and are only loaded by the commands that use them. The rest of `dist/` (tsc's output)
 * stays the package's library entry (`dist/index.js`).
 */
import { readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
rmSync(join(root, 'dist', 'chunks'), { recursive: true, force: true })

/** The commands whose start-up `pnpm bench` measures: one self-contained file each. */
const STANDALONE = new Set(['sessions', 'show', 'recover', 'resume', 'resumePlan', 'run'])

// Every command the program imports lazily, as `import('./commands/<name>.js')`.
const programSource = readFileSync(join(root, 'src', 'program.ts'), 'utf8')
const commands = [...programSource.matchAll(/import\('\.\/commands\/(\w+)\.js'\)/g)].map((m) => m[1])

// fp-ts and io-ts ship an ES-module build beside their CommonJS one. Bundling the ES modules lets
// esbuild link their functions directly; the CommonJS interop would put a getter in front of every
// `E.isLeft` on the hot paths of reading and planning.
const preferEsModules = {
  name: 'prefer-es-modules',
  setup(plugin) {
    const commonJs = /^(fp-ts|io-ts)(\/lib\/.+)?$/
    plugin.onResolve({ filter: commonJs }, async (args) => {
      if (args.pluginData === 'rewritten') return undefined
      const [, pkg, lib] = commonJs.exec(args.path)
      const rest = lib === undefined ? '/index' : lib.slice('/lib'.length)
      const target = `${pkg}/es6${rest.endsWith('.js') ? rest : `${rest}.js`}`
      return plugin.resolve(target, { resolveDir: args.resolveDir, kind: args.kind, pluginData: 'rewritten' })
    })
  },
}

// The shared file of exit codes and error classes, referred to from `dist/` (the program) or from
// `dist/chunks/` (the commands).
const sharedExitCode = (fromChunks) => ({
  name: 'shared-exit-code',
  setup(plugin) {
    plugin.onResolve({ filter: /(^|\/)ExitCode\.js$/ }, (args) =>
      args.importer.endsWith(join('src', 'ExitCode.ts')) || args.kind === 'entry-point'
        ? undefined
        : { path: fromChunks ? './ExitCode.js' : './chunks/ExitCode.js', external: true },
    )
  },
})

// The program's lazy imports of commands point at their files in `dist/chunks/`; a self-contained
// command is loaded through the code cache (`src/loadCommandBundle.ts`) from its hashed file name.
const lazyCommands = (standaloneFiles) => ({
  name: 'lazy-commands',
  setup(plugin) {
    plugin.onResolve({ filter: /^\.\/commands\/\w+\.js$/ }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined
      const name = /(\w+)\.js$/.exec(args.path)[1]
      return standaloneFiles.has(name)
        ? { path: name, namespace: 'command-bundle' }
        : { path: args.path.replace('./commands/', './chunks/'), external: true }
    })
    plugin.onLoad({ filter: /.*/, namespace: 'command-bundle' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(join(root, 'src', 'loadCommandBundle.ts'))}).loadChunk(${JSON.stringify(standaloneFiles.get(args.path))})`,
      loader: 'js',
      resolveDir: join(root, 'src'),
    }))
  },
})

const common = {
  absWorkingDir: root,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  jsx: 'automatic',
  // better-sqlite3 is a native addon, loaded only when a command chooses a SQLite store. The
  // PostgreSQL adapter and its driver stay whole packages outside every bundle, loaded only when a
  // command chooses a postgres:// store (the self-contained commands `require` the adapter's ES
  // module, which Node >= 20.19 allows), so they add nothing to the hot commands' files.
  external: ['ink', 'react', 'react/*', 'openai', 'openai/*', 'better-sqlite3', '@maka/store-postgres', 'pg'],
  // Bundled CommonJS (fp-ts, io-ts) may call require() for node built-ins.
  banner: {
    js: "import { createRequire as __makaCreateRequire } from 'node:module';const require = __makaCreateRequire(import.meta.url);",
  },
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
}

const entries = (names) => Object.fromEntries(names.map((name) => [name, `src/commands/${name}.ts`]))

// The self-contained commands: CommonJS, for `vm.Script` and its code cache, in files named after a
// hash of their content (the cache is keyed by it). Only `loadCommandBundle` loads them; the `.js`
// extension keeps them inside the package's `files`.
const standalone = await build({
  ...common,
  banner: {},
  format: 'cjs',
  // `vm.Script` has no stable way to run `import()`: the OpenAI client, loaded when a run first calls
  // the model, is required instead (the package ships CommonJS beside its ES modules).
  supported: { 'dynamic-import': false },
  plugins: [preferEsModules, sharedExitCode(true)],
  entryPoints: entries(commands.filter((name) => STANDALONE.has(name))),
  outdir: 'dist/chunks',
  entryNames: '[name]-[hash]',
  metafile: true,
})
const standaloneFiles = new Map(
  Object.entries(standalone.metafile.outputs)
    .filter(([, output]) => output.entryPoint !== undefined)
    .map(([file, output]) => [/(\w+)\.ts$/.exec(output.entryPoint)[1], file.split('/').pop()]),
)

await Promise.all([
  build({
    ...common,
    plugins: [sharedExitCode(false), lazyCommands(standaloneFiles)],
    entryPoints: { bin: 'src/bin.ts' },
    outdir: 'dist',
  }),
  build({ ...common, entryPoints: { ExitCode: 'src/ExitCode.ts' }, outdir: 'dist/chunks' }),
  build({
    ...common,
    plugins: [preferEsModules, sharedExitCode(true)],
    entryPoints: entries(commands.filter((name) => !STANDALONE.has(name))),
    outdir: 'dist/chunks',
    splitting: true,
    chunkNames: 'chunk-[hash]',
  }),
])
