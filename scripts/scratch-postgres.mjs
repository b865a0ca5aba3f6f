// A scratch PostgreSQL cluster for tests and benchmarks (docs/decisions.md #88): `initdb` into a temp
// dir (as the `postgres` user when we are root, since initdb refuses root), `pg_ctl start` on
// 127.0.0.1 and a free port with trust auth, and a `stop()` that stops it and removes the dir. A
// cluster that cannot start is an error, never a skip: the tests that need it must fail loudly.
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const PG_ROOT = '/usr/lib/postgresql'

/** The newest installed server's bin dir (`MAKA_PG_BIN` overrides), or an error saying how to install one. */
export const findPostgresBin = () => {
  const override = process.env['MAKA_PG_BIN']
  if (override !== undefined && override !== '') return override
  const versions = existsSync(PG_ROOT)
    ? readdirSync(PG_ROOT)
        .filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (versions.length === 0) {
    throw new Error(
      `no PostgreSQL server under ${PG_ROOT}/*/bin: run scripts/bootstrap.sh as root (apt-get install postgresql) or set MAKA_PG_BIN`,
    )
  }
  return join(PG_ROOT, versions[0], 'bin')
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

const asRoot = process.getuid?.() === 0

// Runs a server binary as the cluster's owner: `postgres` when we are root, else ourselves.
const runAsOwner = (bin, args, options = {}) => {
  if (!asRoot) return execFileSync(bin, args, { stdio: 'pipe', ...options })
  const quoted = [bin, ...args].map((a) => `'${String(a).replaceAll("'", "'\\''")}'`).join(' ')
  return execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', quoted], { stdio: 'pipe', ...options })
}

const explain = (step, error, dir) => {
  const out = [error?.stdout, error?.stderr].filter(Boolean).join('').trim()
  const log =
    dir !== undefined && existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : ''
  return new Error(`scratch PostgreSQL: ${step} failed: ${error?.message ?? error}\n${out}\n${log}`.trim())
}

/**
 * Starts a scratch cluster. Resolves with `{ url, dir, port, stop }`; `stop()` is idempotent and
 * synchronous, so it can also run from a process `exit` handler.
 */
export const startScratchPostgres = async ({ database = 'maka', fsync = true } = {}) => {
  const bin = findPostgresBin()
  const dir = mkdtempSync(join(tmpdir(), 'maka-pg-'))
  let stopped = false
  let started = false
  const data = join(dir, 'data')
  const stop = () => {
    if (stopped) return
    stopped = true
    try {
      if (started) runAsOwner(join(bin, 'pg_ctl'), ['-D', data, 'stop', '-m', 'immediate', '-w'])
    } catch {
      // A server that is already gone leaves nothing to stop; the dir is removed regardless.
    }
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    chmodSync(dir, 0o700)
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
      const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
      chownSync(dir, uid, gid)
    }
    try {
      runAsOwner(join(bin, 'initdb'), ['-A', 'trust', '--no-sync', '-U', 'postgres', '-E', 'UTF8', '-D', data])
    } catch (error) {
      throw explain('initdb', error)
    }
    // Another process may take the free port between our probe and the server's bind: try again.
    let port = 0
    for (let attempt = 1; ; attempt += 1) {
      port = await freePort()
      // The benchmarks keep fsync on (they measure durable commits); tests turn it off, since they
      // kill clients, never the server. Small shared memory suits a shared test box.
      const options =
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=32MB` +
        (fsync ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off')
      try {
        runAsOwner(join(bin, 'pg_ctl'), [
          '-D',
          data,
          '-l',
          join(dir, 'server.log'),
          '-o',
          options,
          '-w',
          '-t',
          '60',
          'start',
        ])
        started = true
        break
      } catch (error) {
        if (attempt >= 3) throw explain('pg_ctl start', error, dir)
      }
    }
    runAsOwner(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', database])
    process.once('exit', stop)
    return { url: `postgres://postgres@127.0.0.1:${port}/${database}`, dir, port, bin, stop }
  } catch (error) {
    stop()
    throw error
  }
}

/**
 * A vitest globalSetup: starts one cluster for the package's test run and gives its URL to the tests
 * as `inject('postgresUrl')` and as `MAKA_TEST_POSTGRES_URL` (for child processes); stopped in teardown.
 */
export default async function setup(project) {
  const cluster = await startScratchPostgres({ fsync: false })
  project.provide('postgresUrl', cluster.url)
  process.env['MAKA_TEST_POSTGRES_URL'] = cluster.url
  return () => cluster.stop()
}
