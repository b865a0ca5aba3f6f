/**
 * Only the app's own renderer may call the handlers: Electron hands each call the frame it came
 * from, and a frame showing anything but the built renderer (a navigation that slipped through, an
 * embedded page) is refused before the handler runs.
 */
import { HostInputError, type IpcMainLike } from '@maka/session-ui'

interface IpcEventLike {
  readonly senderFrame?: { readonly url: string } | null
}

/**
 * Wraps an `ipcMain`-like so every handler first checks the calling frame's URL.
 * @category constructors
 */
export const trustedSenders = (ipc: IpcMainLike, isTrusted: (url: string) => boolean): IpcMainLike => ({
  handle: (channel, listener) =>
    ipc.handle(channel, (event, ...args) => {
      const url = (event as IpcEventLike | null)?.senderFrame?.url
      if (url === undefined || !isTrusted(url)) {
        throw new HostInputError('sender_refused', 'Only the app’s own window may call the host.')
      }
      return listener(event, ...args)
    }),
})
