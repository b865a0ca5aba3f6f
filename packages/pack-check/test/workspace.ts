/**
 * Where the workspace is, which of its packages are published, and how to run pnpm, npm and tsc
 * from a test as a stranger would: with an environment stripped of what pnpm, turbo and vitest put
 * there (a nested vitest or npm would otherwise inherit their settings).
 */
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

export const workspaceRoot = fileURLToPath(new URL('../../..', import.meta.url))

export interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly license?: string
  readonly exports?: Record<string, unknown>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
}

export interface WorkspacePackage {
  readonly dir: string
  readonly manifest: Manifest
}

export const readManifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest

/** Every package under `packages/` and `apps/` that is not private: what a release publishes. */
export const publishablePackages = (): ReadonlyArray<WorkspacePackage> =>
  ['packages', 'apps'].flatMap((group) =>
    readdirSync(join(workspaceRoot, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(workspaceRoot, group, entry.name))
      .map((dir) => ({ dir, manifest: readManifest(dir) }))
      .filter((p) => p.manifest.private !== true),
  )

const strippedPrefixes = ['npm_', 'pnpm_', 'PNPM_', 'VITEST', 'TURBO_', 'NODE_OPTIONS', 'INIT_CWD']

/** The caller's environment without the settings pnpm, turbo and vitest pass to their children. */
export const strangerEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !strippedPrefixes.some((prefix) => key.startsWith(prefix))),
  ),
  NO_COLOR: '1',
  ...extra,
})

const execFileAsync = promisify(execFile)

export interface Ran {
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to completion; a non-zero exit rejects with its output in the message. */
export const run = async (
  file: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv },
): Promise<Ran> => {
  try {
    return await execFileAsync(file, [...args], {
      cwd: options.cwd,
      env: options.env ?? strangerEnv(),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    })
  } catch (cause) {
    const e = cause as { stdout?: string; stderr?: string; message: string }
    throw new Error(
      `${file} ${args.join(' ')} (in ${options.cwd}) failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
    )
  }
}

/** pnpm as [file, ...args]: the one running this test when there is one, else the checkout's pinned copy. */
export const pnpm = (): readonly [string, ...Array<string>] => {
  const execpath = process.env.npm_execpath
  if (execpath !== undefined && /pnpm/.test(execpath)) return [process.execPath, execpath]
  return [join(workspaceRoot, '.tools', 'node_modules', '.bin', 'pnpm')]
}

/** The workspace's own TypeScript compiler. */
export const tscPath = createRequire(import.meta.url).resolve('typescript/bin/tsc')
