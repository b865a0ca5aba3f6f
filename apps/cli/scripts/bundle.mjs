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

await build({
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
  external: ['ink', 'react', 'react/*', 'openai', 'openai/*'],
  // Bundled CommonJS (fp-ts, io-ts) may call require() for node built-ins.
  banner: {
    js: "import { createRequire as __makaCreateRequire } from 'node:module';const require = __makaCreateRequire(import.meta.url);",
  },
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
})
