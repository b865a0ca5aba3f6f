/**
 * What a stranger installs: every publishable package packed with pnpm (the only client that turns
 * `workspace:*` into versions), its tarball checked file by file, then the library tarballs
 * installed with npm into a scratch project outside the workspace, a consumer program typechecked
 * against them with the workspace's TypeScript and run with plain node on golden ledgers.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Manifest,
  type WorkspacePackage,
  pnpm,
  publishablePackages,
  readManifest,
  run,
  strangerEnv,
  tscPath,
  workspaceRoot,
} from './workspace.js'

interface Packed {
  readonly source: WorkspacePackage
  readonly tarball: string
  readonly files: ReadonlyArray<string>
  readonly manifest: Manifest
}

const peerLibraries = ['fp-ts', 'io-ts'] as const
const scratchRoots: Array<string> = []
afterAll(async () => {
  await Promise.all(scratchRoots.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

const scratch = async (prefix: string): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  scratchRoots.push(dir)
  return dir
}

const pack = async (source: WorkspacePackage, destination: string): Promise<Packed> => {
  await mkdir(destination)
  const [file, ...args] = pnpm()
  await run(file, [...args, 'pack', '--pack-destination', destination], { cwd: source.dir })
  const [name, ...others] = await readdir(destination)
  if (name === undefined || others.length > 0) throw new Error(`pnpm pack of ${source.manifest.name} made ${name}`)
  const tarball = join(destination, name)
  const listing = await run('tar', ['-tzf', tarball], { cwd: destination })
  const files = listing.stdout
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//, ''))
  const manifest = JSON.parse(
    (await run('tar', ['-xzOf', tarball, 'package/package.json'], { cwd: destination })).stdout,
  ) as Manifest
  return { source, tarball, files, manifest }
}

/** The files an export map points at: every string leaf, whatever the condition. */
const exportTargets = (value: unknown): ReadonlyArray<string> =>
  typeof value === 'string'
    ? [value]
    : value !== null && typeof value === 'object'
      ? Object.values(value).flatMap(exportTargets)
      : []

const sourceImports = async (dir: string): Promise<ReadonlySet<string>> => {
  const found = new Set<string>()
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) await walk(path)
      else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
        const text = await readFile(path, 'utf8')
        for (const lib of peerLibraries) if (new RegExp(`from '${lib}(/|')`).test(text)) found.add(lib)
      }
    }
  }
  await walk(join(dir, 'src'))
  return found
}

const workspaceVersion = (lib: string): string => {
  const version = readManifest(join(workspaceRoot, 'packages', 'events')).devDependencies?.[lib]
  if (version === undefined) throw new Error(`packages/events pins no ${lib} version`)
  return version
}

const ledger = (scenario: string) => join(workspaceRoot, 'fixtures', 'ledgers', `${scenario}.v1.jsonl`)

describe('published packages', () => {
  const sources = publishablePackages()
  // A library with a native addon is packed and checked, but not installed into the scratch project:
  // npm would compile better-sqlite3 there from source (no prebuilt binary is reachable), minutes per
  // run. Its own tests run its built output under plain node.
  const nativeAddons = new Set(['@maka/store-sqlite'])
  const allLibraries = sources.filter((p) => relative(workspaceRoot, p.dir).startsWith('packages'))
  const libraries = allLibraries.filter((p) => !nativeAddons.has(p.manifest.name))
  let packed: ReadonlyArray<Packed> = []

  beforeAll(async () => {
    const destination = await scratch('maka-packed-')
    const results: Array<Packed> = []
    // Two at a time: each pack is a pnpm process, and the machine is shared.
    for (let i = 0; i < sources.length; i += 2) {
      const batch = sources.slice(i, i + 2)
      results.push(...(await Promise.all(batch.map((p, j) => pack(p, join(destination, String(i + j)))))))
    }
    packed = results
  })

  it('packs every package of the workspace that is not private, the CLI included', () => {
    expect(packed.map((p) => p.manifest.name).sort()).toEqual([
      '@maka/chaos',
      '@maka/cli',
      '@maka/demo',
      '@maka/desktop',
      '@maka/events',
      '@maka/executor',
      '@maka/host-inspector',
      '@maka/mcp',
      '@maka/planner',
      '@maka/projection',
      '@maka/providers',
      '@maka/session-ui',
      '@maka/sessions',
      '@maka/store-jsonl',
      '@maka/store-postgres',
      '@maka/store-sqlite',
      '@maka/stores',
      '@maka/tools',
    ])
  })

  describe('when a tarball is listed', () => {
    it('holds only compiled code and declarations under dist/, the README, the LICENSE and package.json', () => {
      for (const p of packed) {
        const stray = p.files.filter(
          (file) =>
            !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(file) &&
            !/^dist\/.+\.(js|d\.ts)$/.test(file) &&
            // The CLI's executable and its shared error classes are CommonJS (decision 104).
            !(p.manifest.name === '@maka/cli' && /^dist\/(bin|chunks\/ExitCode)\.cjs$/.test(file)) &&
            // The desktop host ships its CommonJS preload; the session UI its built renderer.
            !(p.manifest.name === '@maka/desktop' && /^dist\/electron\/preload\.(cjs|d\.cts)$/.test(file)) &&
            !(p.manifest.name === '@maka/session-ui' && /^dist\/renderer\/.+\.(html|css|js)$/.test(file)),
        )
        expect(stray, p.manifest.name).toEqual([])
        expect(
          p.files.filter((file) => /\.test\.|test-support|tsbuildinfo|\.map$/.test(file)),
          p.manifest.name,
        ).toEqual([])
        expect(p.files, p.manifest.name).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE']))
      }
    })

    it('ships every file its exports, main, types and bin point to', () => {
      for (const p of packed) {
        const pointed = [
          ...exportTargets(p.manifest.exports),
          ...exportTargets((p.manifest as { main?: unknown }).main),
          ...exportTargets((p.manifest as { types?: unknown }).types),
          ...exportTargets((p.manifest as { bin?: unknown }).bin),
        ]
          .filter((target) => !target.includes('*'))
          .map((target) => target.replace(/^\.\//, ''))
        expect(pointed.length, p.manifest.name).toBeGreaterThan(0)
        expect(
          pointed.filter((target) => !p.files.includes(target)),
          `${p.manifest.name} points outside its tarball`,
        ).toEqual([])
      }
    })
  })

  describe('when a packed manifest is read', () => {
    it("keeps the workspace's export map, only without the @maka/source condition", () => {
      const withoutSource = (value: unknown): unknown =>
        value !== null && typeof value === 'object'
          ? Object.fromEntries(
              Object.entries(value)
                .filter(([key]) => key !== '@maka/source')
                .map(([key, inner]) => [key, withoutSource(inner)]),
            )
          : value
      for (const p of packed) {
        expect(p.manifest.exports, p.manifest.name).toEqual(withoutSource(p.source.manifest.exports))
        expect(JSON.stringify(p.manifest), p.manifest.name).not.toContain('@maka/source')
      }
    })

    it('has no workspace: range left', () => {
      for (const p of packed) expect(JSON.stringify(p.manifest), p.manifest.name).not.toContain('workspace:')
    })

    it('names its license, MIT like the repository', () => {
      for (const p of packed) expect(p.manifest.license, p.manifest.name).toBe('MIT')
    })

    it('takes fp-ts and io-ts as peers wherever a library imports them or depends on a package that does', async () => {
      const byName = new Map(allLibraries.map((p) => [p.manifest.name, p]))
      const needs = new Map<string, Set<string>>()
      const peersOf = async (name: string): Promise<Set<string>> => {
        const known = needs.get(name)
        if (known !== undefined) return known
        const p = byName.get(name)!
        const found = new Set(await sourceImports(p.dir))
        needs.set(name, found)
        for (const dep of Object.keys(p.manifest.dependencies ?? {}).filter((d) => byName.has(d)))
          for (const lib of await peersOf(dep)) found.add(lib)
        return found
      }
      for (const p of packed.filter((q) => byName.has(q.manifest.name))) {
        const expected = [...(await peersOf(p.manifest.name))].sort()
        // Optional peers (a driver loaded only when chosen, e.g. chaos's pg) are not fp-ts or io-ts.
        const optional = (p.manifest as { peerDependenciesMeta?: Record<string, { optional?: boolean }> })
          .peerDependenciesMeta
        const required = Object.keys(p.manifest.peerDependencies ?? {}).filter(
          (name) => optional?.[name]?.optional !== true,
        )
        expect(required.sort(), p.manifest.name).toEqual(expected)
        for (const lib of peerLibraries) expect(p.manifest.dependencies?.[lib], p.manifest.name).toBeUndefined()
      }
      // The core imports both, so the check above is not vacuous.
      expect([...(await peersOf('@maka/events'))].sort()).toEqual(['fp-ts', 'io-ts'])
    })
  })

  describe('when a scratch project outside the workspace installs the library tarballs', () => {
    let project = ''
    let compiled = ''

    beforeAll(async () => {
      project = await scratch('maka-consumer-project-')
      expect(relative(workspaceRoot, project).startsWith('..')).toBe(true)
      const tarballs = Object.fromEntries(
        packed.filter((p) => libraries.includes(p.source)).map((p) => [p.manifest.name, `file:${p.tarball}`]),
      )
      await writeFile(
        join(project, 'package.json'),
        JSON.stringify({
          name: 'maka-consumer',
          private: true,
          type: 'module',
          dependencies: {
            ...tarballs,
            'fp-ts': workspaceVersion('fp-ts'),
            'io-ts': workspaceVersion('io-ts'),
          },
          devDependencies: {
            '@types/node': readManifest(join(workspaceRoot, 'packages', 'pack-check')).devDependencies!['@types/node'],
          },
          // The tarballs' @maka/* ranges must be met by these files, never by a registry package of that name.
          overrides: tarballs,
        }),
      )
      await writeFile(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2023'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            exactOptionalPropertyTypes: true,
            noUncheckedIndexedAccess: true,
            // The shipped declarations are checked too: they must stand alone, without src/.
            skipLibCheck: false,
            types: ['node'],
            outDir: 'out',
            rootDir: 'src',
          },
          include: ['src'],
        }),
      )
      await mkdir(join(project, 'src'))
      await writeFile(
        join(project, 'src', 'main.ts'),
        await readFile(new URL('../consumer/main.ts', import.meta.url), 'utf8'),
      )
      await run(
        'npm',
        ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', '--no-package-lock'],
        { cwd: project, env: strangerEnv() },
      )
      // Compiled once here; the first test below reports the outcome, the others run the output.
      compiled = await run(process.execPath, [tscPath, '-p', 'tsconfig.json'], { cwd: project }).then(
        () => 'compiled',
        (e: Error) => e.message,
      )
    })

    it('installs each @maka package once, from its tarball, with the pinned fp-ts and io-ts beside it', async () => {
      for (const p of libraries) {
        const installed = readManifest(join(project, 'node_modules', ...p.manifest.name.split('/')))
        expect(installed.version, p.manifest.name).toBe(p.manifest.version)
      }
      for (const lib of peerLibraries)
        expect(readManifest(join(project, 'node_modules', lib)).version).toBe(workspaceVersion(lib))
      const nested = await run(
        'find',
        ['node_modules', '-mindepth', '2', '-path', '*/node_modules/@maka/*', '-prune'],
        {
          cwd: project,
        },
      )
      expect(nested.stdout.trim()).toBe('')
    })

    it('installs no source map and no reference to one', async () => {
      const installed = join(project, 'node_modules', '@maka')
      const files = (await readdir(installed, { recursive: true })).filter((f) => /\.(js|d\.ts|map)$/.test(f))
      expect(files.length).toBeGreaterThan(0)
      const referencing: Array<string> = []
      for (const file of files)
        if (file.endsWith('.map') || (await readFile(join(installed, file), 'utf8')).includes('sourceMappingURL'))
          referencing.push(file)
      expect(referencing).toEqual([])
    })

    it('typechecks the consumer program against the shipped declarations with the workspace TypeScript', () => {
      expect(compiled).toBe('compiled')
    })

    it.each([
      { scenario: 'interrupted-after-tool-response', disposition: 'continue', reasons: [], replayed: 4 },
      {
        scenario: 'interrupted-after-function-call',
        disposition: 'park',
        reasons: ['dangling_tool_state'],
        replayed: null,
      },
    ])('plans $scenario read through the store: $disposition', async ({ scenario, disposition, reasons, replayed }) => {
      expect(compiled).toBe('compiled')
      const out = await run(process.execPath, [join('out', 'main.js'), ledger(scenario)], { cwd: project })
      const plan = JSON.parse(out.stdout) as Record<string, unknown>
      expect(plan).toEqual({
        disposition,
        rejectionReasons: reasons,
        sourceRuntimeEventHighWater: scenario === 'interrupted-after-tool-response' ? 4 : 3,
        replayedRows: replayed,
        loaded: ['function', 'function', 'function', 'function', 'function', 'function'],
      })
    })
  })
})
