/**
 * @maka/session-ui — the session UI both hosts serve: the React renderer (built by Vite into
 * `dist/renderer/`), the contract between it and a host (`window.maka`, channels, host messages), the
 * session services and handlers behind every channel, and `maka ui`'s loopback server. The Electron
 * app (`@maka/desktop`) registers the same handlers on its `ipcMain`; `maka ui` (`@maka/cli`) serves
 * them over HTTP. Neither host depends on the other.
 */
export * from './hostContract/api.js'
export { HostInputError } from './services/HostInputError.js'
export {
  type SessionServicesOptions,
  type SessionServices,
  type StartupReport,
  makeSessionServices,
} from './services/sessionServices.js'
export { type IpcMainLike, registerSessionIpc } from './services/registerSessionIpc.js'
export { transcriptItemOf } from './services/transcript.js'
export {
  type UiServerOptions,
  type UiServer,
  type MessageHub,
  CONTENT_SECURITY_POLICY,
  makeMessageHub,
  serveUi,
} from './server/serveUi.js'
export { rendererDir } from './server/rendererDir.js'
