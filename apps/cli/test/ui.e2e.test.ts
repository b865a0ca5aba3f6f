/**
 * `maka ui` end to end in real headless Chromium (Debian's, driven by playwright-core): the built
 * CLI serves the built renderer over a data dir with interrupted sessions made by SIGKILLing real
 * turns; the test clicks Safe resume and reads the result back from the ledger on disk. One browser
 * for the file; screenshots go to test-artifacts/ (gitignored).
 */
import { mkdir } from 'node:fs/promises'
import { request } from 'node:http'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ParkReasonSentences, isParkReason, nextStepForPark } from '@maka/events'
import { killedDemoTurn, ledgerRows, removeScratch, runCli, runHeaders, scratch, waitFor } from './support.js'
import { ARTIFACTS, type UiServer, launchChromium, openSession, startUi } from './uiHarness.js'

let browser: Browser
let ui: UiServer | undefined
let url = ''
let dataDir = ''
let workspace = ''

/** A turn of the hidden demo child, SIGKILLed at `at`. */
const killedTurn = (sessionId: string, at: string, env: NodeJS.ProcessEnv = {}): Promise<void> =>
  killedDemoTurn({ dataDir, workspace }, sessionId, at, { env })

const raw = (
  path: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<{ readonly status: number; readonly body: string }> =>
  new Promise((done, fail) => {
    const target = new URL(url)
    const req = request(
      { host: '127.0.0.1', port: target.port, path, method, headers, setHost: !('host' in headers) },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => done({ status: res.statusCode ?? 0, body }))
      },
    )
    req.on('error', fail)
    req.end(method === 'POST' ? JSON.stringify({ args: [] }) : undefined)
  })

beforeAll(async () => {
  const dirs = await scratch()
  dataDir = dirs.dataDir
  workspace = dirs.workspace
  await mkdir(ARTIFACTS, { recursive: true })
  // Parks: a tool call without its result. Startup cannot continue it, so it keeps its banner.
  // A turn without the tool journal: its call may or may not have run, so it parks (dangling_tool_state).
  await killedTurn('s-parked', 'after_function_call', { MAKA_RUNTIME_TOOL_JOURNAL: '0' })
  // Resumable before the UI starts: its start-up pass continues it before any browser connects.
  await killedTurn('s-auto', 'after_tool_response')
  ui = await startUi(dataDir, { safeResume: true })
  url = ui.url
  const started = ui
  await waitFor('the startup pass', () => started.output().includes('startup recovery'), 60_000)
  // Resumable: killed after a committed tool result, while the UI already runs (so the banner shows
  // instead of the start-up continuation).
  await killedTurn('s-resume', 'after_tool_response')
  // Another host's recovery pass closes it with app_restarted, as after a restart.
  expect((await runCli(['recover', '--data-dir', dataDir])).code).toBe(0)
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  await ui?.stop()
  await removeScratch()
})

describe('maka ui in Chromium', () => {
  it('Safe resume continues the interrupted turn: its text streams in, one continuation, no user row', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 640 } })
    await openSession(page, url, 's-resume')
    await page.getByText('The last turn was interrupted (app_restarted).').waitFor()
    const button = page.getByRole('button', { name: 'Safe resume' })
    await expect(button.isEnabled()).resolves.toBe(true)
    await page.screenshot({ path: join(ARTIFACTS, 'banner.png') })
    // The README's picture (docs/desktop-banner.png is a copy): the list and the banner only.
    await page.screenshot({
      path: join(ARTIFACTS, 'banner-readme.png'),
      clip: { x: 0, y: 0, width: 1100, height: 260 },
    })
    await button.click()
    await page.getByText('Resuming from the latest safe boundary').waitFor()
    const continuation = await waitFor(
      'the continuation to complete',
      async () => {
        const runs = (await runHeaders(dataDir, 's-resume')).filter((h) => h['continuationSource'] !== undefined)
        return runs.length === 1 && runs[0]?.['status'] === 'completed' ? runs[0] : undefined
      },
      60_000,
    )
    const rows = await ledgerRows(dataDir, 's-resume', String(continuation['runId']))
    expect(rows.filter((r) => r['role'] === 'user')).toHaveLength(0)
    const text = rows
      .map((r) => r['content'] as { kind?: string; text?: string } | undefined)
      .find((c) => c?.kind === 'text')?.text
    expect(text).toBeTruthy()
    await page.getByText(text ?? '', { exact: true }).waitFor()
    await expect(page.getByRole('region', { name: 'Interrupted turn' }).count()).resolves.toBe(0)
    await page.screenshot({ path: join(ARTIFACTS, 'resumed.png') })
    const headers = await runHeaders(dataDir, 's-resume')
    expect(headers.filter((h) => h['continuationSource'] !== undefined)).toHaveLength(1)
    await page.close()
  })

  it('a browser that connects after start-up is told which interrupted session it continued', async () => {
    expect(ui?.output()).toContain('1 interrupted session(s) continuing')
    const page = await browser.newPage()
    await page.goto(url)
    await page
      .getByRole('status')
      .filter({ hasText: 'Session s-auto was interrupted: continuing from its latest safe boundary.' })
      .waitFor()
    await page.screenshot({ path: join(ARTIFACTS, 'ui-auto-continued.png') })
    await page.close()
    const headers = await runHeaders(dataDir, 's-auto')
    expect(headers.filter((h) => h['continuationSource'] !== undefined)).toHaveLength(1)
  })

  it('the start-up notice closes by itself and a reload of the page does not show it again', async () => {
    const page = await browser.newPage()
    await page.goto(url)
    const notice = page
      .getByRole('status')
      .filter({ hasText: 'Session s-auto was interrupted: continuing from its latest safe boundary.' })
    await notice.waitFor()
    await notice.waitFor({ state: 'detached', timeout: 60_000 })
    await page.reload()
    // The host line and the notice come from the same answer of the host: once the line is there,
    // a notice that was going to show is there too.
    await page.getByText('Safe resume on').waitFor()
    await page.locator('[data-session="s-auto"]').waitFor()
    await expect(notice.count()).resolves.toBe(0)
    await page.close()
  })

  it('a parked session keeps Safe resume off, with the sentence of every reason and the next step, and writes nothing', async () => {
    const plan = await runCli(['resume', 'plan', '--data-dir', dataDir, '--session', 's-parked', '--json'], {
      flag: true,
    })
    expect(plan.code).toBe(3)
    const reasons = (JSON.parse(plan.stdout) as { rejectionReasons: ReadonlyArray<string> }).rejectionReasons
    expect(reasons).toContain('dangling_tool_state')
    const before = await runHeaders(dataDir, 's-parked')
    const page = await browser.newPage({ viewport: { width: 1100, height: 640 } })
    await openSession(page, url, 's-parked')
    const banner = page.getByRole('region', { name: 'Interrupted turn' })
    await banner.getByText('Cannot resume safely').waitFor()
    for (const code of reasons) {
      if (!isParkReason(code)) throw new Error(`unknown reason ${code}`)
      await banner.getByText(ParkReasonSentences[code], { exact: false }).waitFor()
    }
    await banner.getByText(`Next: ${nextStepForPark(reasons[0] ?? '')}`).waitFor()
    const button = page.getByRole('button', { name: 'Safe resume' })
    await expect(button.isDisabled()).resolves.toBe(true)
    // The reasons describe the disabled button to assistive technology.
    const described = await button.getAttribute('aria-describedby')
    expect(described).toBeTruthy()
    await expect(page.locator(`#${described ?? ''}`).textContent()).resolves.toContain(
      nextStepForPark(reasons[0] ?? ''),
    )
    await page.screenshot({ path: join(ARTIFACTS, 'parked.png') })
    // Asking again answers the same, and no click can start a resume that would park.
    await page.getByRole('button', { name: 'Check again' }).click()
    await banner.getByText('Cannot resume safely').waitFor()
    await expect(page.getByRole('button', { name: 'Safe resume' }).isDisabled()).resolves.toBe(true)
    expect(await runHeaders(dataDir, 's-parked')).toEqual(before)
    await page.close()
  })

  it('a toast never covers the Send button, and an error toast stays until its close button', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 640 } })
    await openSession(page, url, 's-parked')
    // A prompt over the host's limit is refused as bad input: an error toast, and nothing is run.
    await page.getByRole('textbox', { name: 'Prompt' }).fill('x'.repeat(100_001))
    await page.getByRole('button', { name: 'Send' }).click()
    const toast = page.getByRole('status').filter({ hasText: 'The turn did not start.' })
    await toast.waitFor()
    // Send still takes the pointer: a trial click checks that nothing covers it, without sending.
    const send = page.getByRole('button', { name: 'Send' })
    await send.click({ trial: true })
    const composer = await page.locator('form.composer').boundingBox()
    if (composer === null) throw new Error('the composer is not shown')
    for (const box of await Promise.all((await page.locator('.toast').all()).map((t) => t.boundingBox()))) {
      if (box === null) continue
      const overlaps =
        box.x < composer.x + composer.width &&
        composer.x < box.x + box.width &&
        box.y < composer.y + composer.height &&
        composer.y < box.y + box.height
      expect(overlaps).toBe(false)
    }
    await page.screenshot({ path: join(ARTIFACTS, 'toast-error.png') })
    await toast.getByRole('button', { name: 'Dismiss' }).click()
    await toast.waitFor({ state: 'detached' })
    await page.close()
  })

  it('refuses a request without the token, with a foreign Origin or for a foreign Host', async () => {
    const token = new URL(url).searchParams.get('token') ?? ''
    const json = { 'content-type': 'application/json' }
    const missing = await raw('/api/invoke/sessions:list', json, 'POST')
    expect(missing.status).toBe(401)
    expect(JSON.parse(missing.body)).toMatchObject({ code: 'token_refused' })
    const wrong = await raw('/api/events?token=not-it', {})
    expect(wrong.status).toBe(401)
    const foreign = await raw(
      '/api/invoke/sessions:list',
      { ...json, 'x-maka-token': token, origin: 'http://evil.example' },
      'POST',
    )
    expect(foreign.status).toBe(403)
    expect(JSON.parse(foreign.body)).toMatchObject({ code: 'origin_refused' })
    const rebound = await raw('/', { host: `evil.example:${new URL(url).port}` })
    expect(rebound.status).toBe(421)
    const allowed = await raw('/api/invoke/sessions:list', { ...json, 'x-maka-token': token }, 'POST')
    expect(allowed.status).toBe(200)

    // From a page of another origin, the browser's own request carries that Origin and is refused.
    const page = await browser.newPage()
    await page.goto('about:blank')
    const status = await page.evaluate(
      async ([target, key]) => {
        try {
          const res = await fetch(`${target}/api/invoke/sessions:list`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-maka-token': key ?? '' },
            body: '{"args":[]}',
          })
          return res.status
        } catch {
          return -1
        }
      },
      [new URL(url).origin, token] as const,
    )
    // The preflight is refused, so the browser never gets an answer it may read.
    expect(status).not.toBe(200)
    await page.close()
  })

  it('without the flag serves no resume channel; a bad --port is bad input', async () => {
    const bad = await runCli(['ui', '--data-dir', dataDir, '--no-open', '--port', 'abc'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--port')
    const off = await startUi(dataDir, { safeResume: false })
    try {
      const address = new URL(off.url)
      expect(off.output()).toContain('safe resume off')
      const call = async (channel: string, args: ReadonlyArray<unknown>) => {
        const res = await fetch(`${address.origin}/api/invoke/${channel}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-maka-token': address.searchParams.get('token') ?? '' },
          body: JSON.stringify({ args }),
        })
        return { status: res.status, body: (await res.json()) as Record<string, unknown> }
      }
      expect(await call('host:info', [])).toEqual({
        status: 200,
        body: { value: { safeResume: false, transport: 'http', autoContinued: [] } },
      })
      const resume = await call('sessions:resumeLatest', ['s-parked'])
      expect(resume.status).toBe(404)
      expect(resume.body).toMatchObject({ code: 'unknown_channel' })
    } finally {
      // SIGTERM stops the server cleanly.
      expect(await off.stop()).toBe(0)
    }
  })
})
