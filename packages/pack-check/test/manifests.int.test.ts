/**
 * What every publishable manifest promises before anything is packed: `npm pack` refuses it (only
 * pnpm resolves `workspace:*`), it names the Node versions it runs on and how it is published, and
 * installing the CLI for JSONL stores pulls no native addon, no database client and no web UI.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Manifest, publishablePackages, readManifest, run, strangerEnv, workspaceRoot } from './workspace.js'

interface FullManifest extends Manifest {
  readonly scripts?: Record<string, string>
  readonly engines?: Record<string, string>
  readonly publishConfig?: { readonly access?: string }
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
}

const full = (dir: string): FullManifest => readManifest(dir)

// The packages a JSONL user of the CLI must not install: a native addon, database clients, the web UI.
const onlyWhenChosen = ['better-sqlite3', 'pg', '@maka/store-sqlite', '@maka/store-postgres', '@maka/session-ui']

describe('publishable manifests', () => {
  const sources = publishablePackages()

  it('each has the pnpm-only prepack guard, engines and a public publishConfig, the CLI included', () => {
    expect(sources.map((p) => p.manifest.name)).toContain('@maka/cli')
    for (const p of sources) {
      const manifest = full(p.dir)
      expect(manifest.scripts?.['prepack'], p.manifest.name).toBe('node ../../scripts/require-pnpm.mjs')
      expect(manifest.engines?.['node'], p.manifest.name).toBe('>=20.19')
      expect(manifest.publishConfig?.access, p.manifest.name).toBe('public')
    }
  })

  it('npm pack refuses the CLI, which would otherwise ship workspace:* ranges', async () => {
    const cli = join(workspaceRoot, 'apps', 'cli')
    const outcome = await run('npm', ['pack', '--dry-run', '--ignore-scripts=false'], {
      cwd: cli,
      env: strangerEnv({ npm_config_loglevel: 'error' }),
    }).then(
      () => 'packed',
      (e: Error) => e.message,
    )
    expect(outcome).toContain('@maka/cli: pack and publish with pnpm')
  })

  it('lets a JSONL user of the CLI install no SQL driver, database client or web UI: each is an optional peer', () => {
    const byName = new Map(sources.map((p) => [p.manifest.name, p]))
    const cli = full(join(workspaceRoot, 'apps', 'cli'))
    // Everything `npm install @maka/cli` brings: dependencies, followed through the workspace's packages.
    const installed = new Set<string>()
    const visit = (manifest: Manifest): void => {
      for (const name of Object.keys(manifest.dependencies ?? {})) {
        if (installed.has(name)) continue
        installed.add(name)
        const inner = byName.get(name)
        if (inner !== undefined) visit(inner.manifest)
      }
    }
    visit(cli)
    expect(onlyWhenChosen.filter((name) => installed.has(name))).toEqual([])
    for (const name of onlyWhenChosen) {
      expect(cli.peerDependencies?.[name], name).toBeDefined()
      expect(cli.peerDependenciesMeta?.[name]?.optional, name).toBe(true)
    }
  })
})
