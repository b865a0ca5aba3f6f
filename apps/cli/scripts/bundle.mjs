/**
 * Bundles the `maka` executable after `tsc` has type-checked and emitted the package: esbuild
 * writes `dist/bin.cjs`, one CommonJS file holding the program (commander included; CommonJS so
 * Node starts it without its ES-module loader, decision 104), and each lazily imported command to
 * `dist/chunks/`. The commands a user runs most (`sessions`, `show`, `recover`, `resume`, `resume
 * plan`, `run`) are each one self-contained file with exactly the code they use (fp-ts, io-ts and
 * @maka/* included), so a command loads two or three files. Code splitting would share files
 * between them, but esbuild assigns whole files to shared chunks, so `maka sessions` would also
 * load the planner and the executor it never calls; one file per command costs disk, not start-up
 * time. The other commands (chat, demo, chaos and their children) keep a
 * split build, so `maka chat` still loads its terminal UI (and ink, react) only when it opens it.
 * The classes the program checks with `instanceof` (`ExitCode.ts`) live in one shared file, so an
 * error thrown by any command is recognised by the program. ink and react stay external and are
 * only loaded by the chat's terminal UI. The OpenAI client is bundled (decision 244): loaded as a
 * package it was some hundred CommonJS files compiled without a code cache on every resume that
 * reaches a model; inside a command's bundle it is compiled once, cached, and run only when a
 * command first calls an OpenAI-compatible endpoint. The rest of `dist/` (tsc's output)
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

// `node:child_process` (with `node:net` and the stream classes under it) is a few milliseconds of a
// cold start, and commander requires it at load for executable subcommands the program never has; the
// host inspector and the shell tool call it only when a process must be asked or spawned. Its
// importers get functions that load it on their first call.
const CHILD_PROCESS_CALLS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(plugin) {
    plugin.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      args.namespace === 'lazy-builtin'
        ? { path: 'node:child_process', external: true }
        : { path: 'child_process', namespace: 'lazy-builtin' },
    )
    plugin.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, () => ({
      contents: [
        `let loaded`,
        `const load = () => (loaded ??= require('node:child_process'))`,
        ...CHILD_PROCESS_CALLS.map((name) => `export const ${name} = (...args) => load().${name}(...args)`),
      ].join('\n'),
      loader: 'js',
      resolveDir: root,
    }))
  },
}

// The shared module of exit codes and error classes, CommonJS (`dist/chunks/ExitCode.cjs`), so the
// executable requires it without starting Node's ES-module loader. `path` is how a build refers to
// it: the executable and the ES-module commands by its file, a bundle run by `loadCommandBundle` by
// the name `./ExitCode.js`, which that loader answers with the program's own module.
const sharedExitCode = (path) => ({
  name: 'shared-exit-code',
  setup(plugin) {
    plugin.onResolve({ filter: /(^|\/)ExitCode\.js$/ }, (args) =>
      args.importer.endsWith(join('src', 'ExitCode.ts')) || args.kind === 'entry-point'
        ? undefined
        : { path, external: true },
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
  // The drivers stay outside every bundle, loaded only when a command chooses their store:
  // better-sqlite3 (a native addon) and pg. The adapters over them are bundled like the rest of
  // @maka/*: loading the PostgreSQL adapter as a package meant its own ES module graph (a second
  // @maka/stores and @maka/events, fp-ts through the CommonJS lexer), 150–300 ms of every postgres://
  // command's start (decision 243). The MCP client (@maka/mcp with the SDK and zod, ~1.5 MB) stays a
  // package too: only a command that finds an MCP config file loads it, and bundled it would grow
  // every tool-running command's file for everyone (decision 270).
  external: ['ink', 'react', 'react/*', 'better-sqlite3', 'pg', '@maka/mcp'],
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
  // `import.meta.url` of a self-contained command is its own file in `dist/chunks/` (`loadCommandBundle`
  // passes `__filename`), where the shell tool finds the supervisor it spawns beside it.
  banner: { js: 'var __makaChunkUrl = require("node:url").pathToFileURL(__filename).href;' },
  define: { 'import.meta.url': '__makaChunkUrl' },
  format: 'cjs',
  // `vm.Script` has no stable way to run `import()`: the OpenAI client, loaded when a run first calls
  // the model, is required instead (the package ships CommonJS beside its ES modules).
  supported: { 'dynamic-import': false },
  plugins: [preferEsModules, sharedExitCode('./ExitCode.js'), lazyChildProcess],
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

// tsc's ES-module `dist/bin.js` is not the executable; `dist/bin.cjs` is.
rmSync(join(root, 'dist', 'bin.js'), { force: true })
rmSync(join(root, 'dist', 'bin.d.ts'), { force: true })

await Promise.all([
  // The executable: CommonJS, which Node starts without its ES-module loader (decision 104).
  build({
    ...common,
    banner: { js: '"use strict";var __makaBinUrl = require("node:url").pathToFileURL(__filename).href;' },
    define: { 'import.meta.url': '__makaBinUrl' },
    format: 'cjs',
    plugins: [sharedExitCode('./chunks/ExitCode.cjs'), lazyCommands(standaloneFiles), lazyChildProcess],
    entryPoints: ['src/bin.ts'],
    outfile: 'dist/bin.cjs',
  }),
  build({
    ...common,
    banner: {},
    format: 'cjs',
    entryPoints: { ExitCode: 'src/ExitCode.ts' },
    outdir: 'dist/chunks',
    outExtension: { '.js': '.cjs' },
  }),
  // The supervisor of a protocol run's foreground shell (@maka/tools, spec §4a) is a script of its
  // own that the shell tool spawns with node from beside the code that calls it: every command that
  // runs tools lives in `dist/chunks/`, so it is bundled there, whole.
  build({
    ...common,
    entryPoints: { shellSupervisor: join(root, 'node_modules', '@maka', 'tools', 'dist', 'shellSupervisor.js') },
    outdir: 'dist/chunks',
  }),
  build({
    ...common,
    plugins: [preferEsModules, sharedExitCode('./ExitCode.cjs')],
    entryPoints: entries(commands.filter((name) => !STANDALONE.has(name))),
    outdir: 'dist/chunks',
    splitting: true,
    chunkNames: 'chunk-[hash]',
  }),
])
