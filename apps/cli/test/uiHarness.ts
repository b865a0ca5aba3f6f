/**
 * What the `maka ui` browser tests share: the built CLI serving a data dir, and Debian's Chromium
 * driven headless by playwright-core. Screenshots go to test-artifacts/ (gitignored).
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type Browser, type Page, chromium } from 'playwright-core'
import { CLI, cliEnv, waitFor } from './support.js'

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium'
if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: scripts/bootstrap.sh installs Debian's chromium.`)

/** Where the browser tests put their screenshots. */
export const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url))

/** A running `maka ui`: the address it printed, all it printed so far, and a stop that says how it exited. */
export interface UiServer {
  readonly url: string
  readonly output: () => string
  readonly stop: () => Promise<number | null>
}

/**
 * Starts `maka ui --no-open` on `dataDir` and waits until it prints its address. `safeResume` sets
 * `MAKA_RUNTIME_SAFE_BOUNDARY_RESUME`; `env` adds to the environment.
 */
export const startUi = async (
  dataDir: string,
  options: { readonly safeResume: boolean; readonly env?: NodeJS.ProcessEnv },
): Promise<UiServer> => {
  const server = spawn(process.execPath, [CLI, 'ui', '--data-dir', dataDir, '--no-open'], {
    env: { ...cliEnv(options.safeResume), ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let out = ''
  server.stdout.setEncoding('utf8')
  server.stdout.on('data', (chunk: string) => (out += chunk))
  const stop = async (): Promise<number | null> => {
    if (server.exitCode !== null) return server.exitCode
    const exited = new Promise<number | null>((done) => server.once('exit', (code) => done(code)))
    server.kill('SIGTERM')
    return exited
  }
  try {
    const url = await waitFor(
      'maka ui to listen',
      () => /Open (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(out)?.[1],
      60_000,
    )
    return { url, output: () => out, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** Headless Chromium without the sandbox (a container has none to give) or anything that calls home. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    chromiumSandbox: false,
    args: [
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })

/** Opens the UI and the session, and waits for its interrupted-turn banner. */
export const openSession = async (page: Page, url: string, sessionId: string): Promise<void> => {
  await page.goto(url)
  await page.locator(`[data-session="${sessionId}"]`).click()
  await page.getByRole('region', { name: 'Interrupted turn' }).waitFor()
}
