/**
 * The Electron main process: wiring only. The services, handlers and their checks are
 * `@maka/session-ui`'s, which never imports `electron` (tested in Node); this file hands them the
 * real `ipcMain` behind `trustedSenders`, and the built renderer to a window locked down (context
 * isolation, no Node in the renderer, sandbox, no navigation away).
 */
import { homedir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { BrowserWindow, app, ipcMain } from 'electron'
import {
  MESSAGE_CHANNEL,
  RESUME_PROGRESS_CHANNEL,
  makeSessionServices,
  registerSessionIpc,
  rendererDir,
} from '@maka/session-ui'
import { trustedSenders } from '../main/trustedSenders.js'

const safeResume = process.env['MAKA_RUNTIME_SAFE_BOUNDARY_RESUME'] === '1'
const dataDir = process.env['MAKA_HOME'] ?? join(homedir(), '.maka')
let window: BrowserWindow | null = null
const services = makeSessionServices({
  dataDir,
  safeResume,
  // A resume's progress while it waits for a command has a channel of its own.
  emit: (message) =>
    window?.webContents.send(message.type === 'resumeProgress' ? RESUME_PROGRESS_CHANNEL : MESSAGE_CHANNEL, message),
})

await app.whenReady()
const renderer = `${pathToFileURL(rendererDir()).href}/`
registerSessionIpc(
  trustedSenders(ipcMain, (url) => url.startsWith(renderer)),
  services,
  'electron',
)
window = new BrowserWindow({
  width: 1100,
  height: 760,
  webPreferences: {
    preload: fileURLToPath(new URL('./preload.cjs', import.meta.url)),
    contextIsolation: true,
    nodeIntegration: false,
    sandbox: true,
    additionalArguments: [`--maka-safe-resume=${safeResume ? '1' : '0'}`],
  },
})
window.webContents.on('will-navigate', (event) => event.preventDefault())
window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }))
await window.loadFile(join(rendererDir(), 'index.html'))
// Closing the window stops every wait (nothing is written) and cancels the runs still going.
app.on('window-all-closed', () => {
  void services.cancelAll().then(() => app.quit())
})
// Startup after the window exists, so the auto-continuations stream into it; a continuation that
// waits for a command still running waits in the background and never holds the window.
await services.startup()
