/**
 * @maka/desktop — the desktop host: the main-process session services and IPC handlers (no
 * `electron` import, so they are tested in Node), and `maka ui`'s loopback server for the same
 * renderer. The Electron entry points are `dist/electron/main.js` and `dist/electron/preload.cjs`.
 */
export * from './shared/api.js'
export { HostInputError } from './main/HostInputError.js'
export {
  type SessionServicesOptions,
  type SessionServices,
  type StartupReport,
  makeSessionServices,
} from './main/sessionServices.js'
export { type IpcMainLike, registerSessionIpc } from './main/registerSessionIpc.js'
export { trustedSenders } from './main/trustedSenders.js'
export { transcriptItemOf } from './main/transcript.js'
export {
  type UiServerOptions,
  type UiServer,
  type MessageHub,
  CONTENT_SECURITY_POLICY,
  makeMessageHub,
  serveUi,
} from './server/serveUi.js'
export { rendererDir } from './server/rendererDir.js'
