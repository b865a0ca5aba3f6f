/**
 * `maka ui` in real headless Chromium for the calls a crash leaves open (issue 25): a command its
 * crashed agent left running (a foreground `shell` under the supervisor) — the banner shows which
 * call it waits for and for how long, and resumes by itself once the command ends; start-up waits for
 * such a command in the background; closing the tab stops a wait and writes nothing. And a call the
 * runtime cannot judge (a background `shell` killed right after its dispatch): the banner lists it
 * with a preview, **Resolve…** opens a confirmation that says what the verdict means, the verdict is
 * recorded, and **Safe resume** then continues the turn. Screenshots go to test-artifacts/.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OperatorVerdictMeanings } from '@maka/events'
import {
  killedDemoTurn,
  ledgerRows,
  removeScratch,
  runCli,
  runHeaders,
  runningCommandSession,
  scratch,
  scriptFile,
  waitFor,
} from './support.js'
import { ARTIFACTS, type UiServer, launchChromium, openSession, startUi } from './uiHarness.js'

let browser: Browser
let ui: UiServer | undefined
let url = ''
let root = ''
let dataDir = ''
// What the UI printed so far.
const out = (): string => ui?.output() ?? ''

// Each session gets a folder of its own, so releasing one command leaves the others running.
const workspaceOf = async (name: string): Promise<string> => {
  const dir = join(root, `ws-${name}`)
  await mkdir(dir, { recursive: true })
  return dir
}

const release = (name: string) => writeFile(join(root, `ws-${name}`, 'release'), '')

const callIdOf = async (sessionId: string): Promise<string> => {
  const [source] = await runHeaders(dataDir, sessionId)
  const rows = await ledgerRows(dataDir, sessionId, String(source?.['runId']))
  const call = rows
    .map((row) => row['content'] as { kind?: string; id?: string } | undefined)
    .find((c) => c?.kind === 'function_call')
  return call?.id ?? '?'
}

const continuationsOf = async (sessionId: string) =>
  (await runHeaders(dataDir, sessionId)).filter((h) => h['continuationSource'] !== undefined)

const completedContinuation = (sessionId: string) =>
  waitFor(
    `the continuation of ${sessionId} to complete`,
    async () => {
      const runs = await continuationsOf(sessionId)
      return runs.find((h) => h['status'] === 'completed')
    },
    90_000,
  )

beforeAll(async () => {
  const dirs = await scratch()
  root = dirs.root
  dataDir = dirs.dataDir
  await mkdir(ARTIFACTS, { recursive: true })
  // Before the UI starts: its start-up pass finds the command running and waits in the background.
  await runningCommandSession({ ...dirs, workspace: await workspaceOf('boot') }, 's-boot')
  ui = await startUi(dataDir, { safeResume: true, env: { MAKA_RUNTIME_TOOL_JOURNAL: '1' } })
  url = ui.url
  // Start-up is not held by the wait: its line comes while the command still runs.
  await waitFor('the startup pass', () => out().includes('startup recovery'), 60_000)
  // While the UI runs, closed by another host's recovery as after a restart.
  await runningCommandSession({ ...dirs, workspace: await workspaceOf('wait') }, 's-wait')
  await runningCommandSession({ ...dirs, workspace: await workspaceOf('close') }, 's-close')
  const script = await scriptFile(root, 'bg.json', [
    { toolCall: { name: 'shell', args: { command: 'echo published > publish.log', background: true } } },
    { text: 'Started it.' },
  ])
  await killedDemoTurn({ dataDir, workspace: await workspaceOf('open') }, 's-open', 'after_tool_dispatch_committed', {
    script,
    env: { MAKA_RUNTIME_TOOL_JOURNAL: '1' },
  })
  expect((await runCli(['recover', '--data-dir', dataDir])).code).toBe(0)
  browser = await launchChromium()
}, 240_000)

afterAll(async () => {
  for (const name of ['boot', 'wait', 'close']) await release(name).catch(() => undefined)
  await browser?.close()
  await ui?.stop()
  await removeScratch()
})

describe('maka ui and a command still running', { timeout: 240_000 }, () => {
  it('start-up waits for it in the background, shows the wait, and continues once it ends', async () => {
    expect(out()).toContain('1 waiting for a command still running')
    const callId = await callIdOf('s-boot')
    const page = await browser.newPage({ viewport: { width: 1100, height: 640 } })
    await openSession(page, url, 's-boot')
    const waiting = page.getByRole('status', { name: 'Waiting for a command' })
    await waiting.getByText(new RegExp(`Waiting for shell \\(call ${callId}\\): still running for \\d+ s\\.`)).waitFor()
    await expect(page.getByRole('button', { name: 'Waiting…' }).isDisabled()).resolves.toBe(true)
    expect(await continuationsOf('s-boot')).toHaveLength(0)
    await release('boot')
    await page
      .getByRole('status')
      .filter({ hasText: 'Session s-boot was interrupted: continuing from its latest safe boundary.' })
      .waitFor()
    const continuation = await completedContinuation('s-boot')
    const rows = await ledgerRows(dataDir, 's-boot', String(continuation['runId']))
    expect(rows.filter((r) => r['role'] === 'user')).toHaveLength(0)
    expect(await continuationsOf('s-boot')).toHaveLength(1)
    await page.close()
  })

  it('Safe resume shows which call it waits for and for how long, and resumes by itself when it ends', async () => {
    const callId = await callIdOf('s-wait')
    const page = await browser.newPage({ viewport: { width: 1100, height: 640 } })
    await openSession(page, url, 's-wait')
    const banner = page.getByRole('region', { name: 'Interrupted turn' })
    await banner.getByText(`shell (call ${callId}) is still running: Safe resume waits for it to end`).waitFor()
    await page.getByRole('button', { name: 'Safe resume' }).click()
    const waiting = page.getByRole('status', { name: 'Waiting for a command' })
    await waiting.getByText(new RegExp(`Waiting for shell \\(call ${callId}\\): still running for \\d+ s\\.`)).waitFor()
    await page.screenshot({ path: join(ARTIFACTS, 'banner-waiting.png') })
    // The README's picture (docs/desktop-banner-waiting.png is a copy).
    await page.screenshot({
      path: join(ARTIFACTS, 'banner-waiting-readme.png'),
      clip: { x: 0, y: 0, width: 1100, height: 260 },
    })
    // The banner never shows the command.
    await expect(banner.textContent()).resolves.not.toContain('MAKA_AGENT_PID')
    expect(await continuationsOf('s-wait')).toHaveLength(0)
    await release('wait')
    await page.getByText('Resuming from the latest safe boundary').waitFor()
    const continuation = await completedContinuation('s-wait')
    await expect(page.getByRole('region', { name: 'Interrupted turn' }).count()).resolves.toBe(0)
    const rows = await ledgerRows(dataDir, 's-wait', String(continuation['runId']))
    const response = rows.find((r) => (r['content'] as { kind?: string } | undefined)?.kind === 'function_response')
    expect(response?.['content']).toMatchObject({ id: callId, result: { exitCode: 0, stdout: 'released\n' } })
    expect(await continuationsOf('s-wait')).toHaveLength(1)
    await page.close()
  })

  it('closing the tab stops the wait and writes nothing', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 640 } })
    await openSession(page, url, 's-close')
    await page.getByRole('button', { name: 'Safe resume' }).click()
    await page.getByRole('status', { name: 'Waiting for a command' }).waitFor()
    await page.close()
    await waitFor(
      'the wait to stop',
      () => out().includes('stopped waiting for 1 command(s); nothing was written'),
      60_000,
    )
    expect(await runHeaders(dataDir, 's-close')).toHaveLength(1)
    // Once the command ended, a new page's Safe resume is the one continuation.
    await release('close')
    await waitFor(
      'the plan to continue',
      async () =>
        (await runCli(['resume', 'plan', '--data-dir', dataDir, '--session', 's-close'], { flag: true })).code === 0,
      60_000,
    )
    expect(await runHeaders(dataDir, 's-close')).toHaveLength(1)
    const again = await browser.newPage({ viewport: { width: 1100, height: 640 } })
    await openSession(again, url, 's-close')
    await again.getByRole('button', { name: 'Safe resume' }).click()
    await again.getByText('Resuming from the latest safe boundary').waitFor()
    await completedContinuation('s-close')
    expect(await continuationsOf('s-close')).toHaveLength(1)
    await again.close()
  })
})

describe('maka ui and a call only a person can settle', { timeout: 240_000 }, () => {
  it('lists the open call with a preview; Resolve… says what the verdict means, records it, then Safe resume continues', async () => {
    const callId = await callIdOf('s-open')
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } })
    await openSession(page, url, 's-open')
    const banner = page.getByRole('region', { name: 'Interrupted turn' })
    await banner.getByText('Cannot resume safely').waitFor()
    await banner.getByText(`shell (call ${callId})`).waitFor()
    await banner.getByText('run "echo published > publish.log" in the background').waitFor()
    await expect(page.getByRole('button', { name: 'Safe resume' }).isDisabled()).resolves.toBe(true)
    await page.screenshot({ path: join(ARTIFACTS, 'banner-open-calls.png') })
    await banner.getByRole('button', { name: 'Resolve…' }).click()
    const dialog = page.getByRole('dialog', { name: `Resolve shell (call ${callId})` })
    await dialog.waitFor()
    // Nothing can be recorded before a verdict is picked; picking one says what it means.
    await expect(dialog.getByRole('button', { name: 'Record verdict' }).isDisabled()).resolves.toBe(true)
    await dialog.getByLabel('It did not take effect (not_applied)').check()
    await dialog.getByRole('note').getByText(OperatorVerdictMeanings.not_applied).waitFor()
    await dialog.getByRole('textbox', { name: 'Output (optional)' }).fill('Checked: nothing was published.')
    // The README's picture (docs/desktop-banner-resolve.png is a copy): the banner and the dialog.
    await page.evaluate("document.querySelector('.transcript > .scroll')?.scrollTo(0, 0)")
    await page.screenshot({ path: join(ARTIFACTS, 'banner-resolve.png') })
    await page.screenshot({
      path: join(ARTIFACTS, 'banner-resolve-readme.png'),
      clip: { x: 0, y: 0, width: 1100, height: 760 },
    })
    expect(await runHeaders(dataDir, 's-open')).toHaveLength(1)
    await dialog.getByRole('button', { name: 'Record verdict' }).click()
    await page.getByRole('status').filter({ hasText: 'Recorded: it did not take effect' }).waitFor()
    await dialog.waitFor({ state: 'detached' })
    // The adjudication run: one response, by the person, through the browser.
    const adjudication = await waitFor(
      'the adjudication run',
      async () => (await continuationsOf('s-open')).find((h) => h['failureClass'] === 'operator_resolved'),
      60_000,
    )
    const adjudicated = await ledgerRows(dataDir, 's-open', String(adjudication['runId']))
    const settled = adjudicated.find(
      (r) => (r['content'] as { kind?: string } | undefined)?.kind === 'function_response',
    )
    expect(settled).toMatchObject({
      author: 'user',
      content: { id: callId, result: 'Checked: nothing was published.', isError: true },
    })
    expect(JSON.stringify(settled)).toContain('"actor":"browser"')
    // Then Safe resume continues the turn from the record.
    await banner.getByText('A verdict was recorded for the interrupted turn’s open tool call.').waitFor()
    const button = page.getByRole('button', { name: 'Safe resume' })
    await waitFor('Safe resume to be offered', () => button.isEnabled(), 60_000)
    await button.click()
    await page.getByText('Resuming from the latest safe boundary').waitFor()
    const continuation = await completedContinuation('s-open')
    const rows = await ledgerRows(dataDir, 's-open', String(continuation['runId']))
    expect(rows.filter((r) => r['role'] === 'user')).toHaveLength(0)
    await page.close()
  })
})
