/**
 * @maka/desktop — the Electron host: its main process (`dist/electron/main.js`) registers
 * `@maka/session-ui`'s handlers on the real `ipcMain` behind `trustedSenders`, and its sandboxed
 * preload (`dist/electron/preload.cjs`) exposes them as `window.maka` to `@maka/session-ui`'s
 * renderer. The library entry is the one piece of that wiring that is not Electron's own API.
 */
export { trustedSenders } from './main/trustedSenders.js'
