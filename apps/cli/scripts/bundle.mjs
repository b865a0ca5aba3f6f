/**
 * Bundles the `maka` executable after `tsc` has type-checked and emitted the package: esbuild
 * replaces `dist/bin.js` with one file holding the program and the workspace packages it imports
 * at start (commander, fp-ts, io-ts and @maka/* included), so a command loads a handful of files
 * instead of ~100 modules. Each lazily imported command is its own chunk under `dist/chunks/`;
 * ink, react and the OpenAI client stay external and are only loaded by the commands that use them.
 * The rest of `dist/` (tsc's output) stays the package's library entry (`dist/index.js`).
 */
import { rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
rmSync(join(root, 'dist', 'chunks'), { recursive: true, force: true })

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

await build({
  plugins: [preferEsModules],
  absWorkingDir: root,
  entryPoints: { bin: 'src/bin.ts' },
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  jsx: 'automatic',
  // better-sqlite3 is a native addon, loaded only when a command chooses a SQLite store.
  external: ['ink', 'react', 'react/*', 'openai', 'openai/*', 'better-sqlite3'],
  // Bundled CommonJS (fp-ts, io-ts) may call require() for node built-ins.
  banner: {
    js: "import { createRequire as __makaCreateRequire } from 'node:module';const require = __makaCreateRequire(import.meta.url);",
  },
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
})
