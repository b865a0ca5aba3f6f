/**
 * The preload: `window.maka` over IPC, nothing else. A sandboxed preload cannot load local modules,
 * so the channel names are spelled here (the test compares them with `Channels`). Every call names
 * a session, a prompt, a permission answer or a person's verdict on an open tool call; none lets the
 * renderer state a safety fact.
 */
// A sandboxed preload is CommonJS: `import … = require` is how TypeScript writes that under
// verbatimModuleSyntax.
// eslint-disable-next-line @typescript-eslint/no-require-imports
import electron = require('electron')

const { contextBridge, ipcRenderer } = electron

const safeResume = process.argv.includes('--maka-safe-resume=1')
const sessions = {
  list: () => ipcRenderer.invoke('sessions:list'),
  get: (sessionId: string) => ipcRenderer.invoke('sessions:get', sessionId),
  send: (sessionId: string, prompt: string) => ipcRenderer.invoke('sessions:send', sessionId, prompt),
}
contextBridge.exposeInMainWorld('maka', {
  info: () => ipcRenderer.invoke('host:info'),
  sessions: safeResume
    ? {
        ...sessions,
        resumePlan: (sessionId: string) => ipcRenderer.invoke('sessions:resumePlan', sessionId),
        resumeLatest: (sessionId: string) => ipcRenderer.invoke('sessions:resumeLatest', sessionId),
        // Only these four values cross; the main process adds who asked.
        resolveCall: (sessionId: string, operationId: string, verdict: string, output?: string) =>
          output === undefined
            ? ipcRenderer.invoke('sessions:resolveCall', sessionId, operationId, verdict)
            : ipcRenderer.invoke('sessions:resolveCall', sessionId, operationId, verdict, output),
        onResumeProgress: (listener: (progress: unknown) => void) => {
          const forward = (_event: unknown, progress: unknown): void => listener(progress)
          ipcRenderer.on('sessions:resumeProgress', forward)
          return () => ipcRenderer.removeListener('sessions:resumeProgress', forward)
        },
      }
    : sessions,
  permissions: {
    answer: (requestId: string, decision: 'allow' | 'deny') =>
      ipcRenderer.invoke('permissions:answer', requestId, decision),
  },
  onMessage: (listener: (message: unknown) => void) => {
    const forward = (_event: unknown, message: unknown): void => listener(message)
    ipcRenderer.on('maka:message', forward)
    return () => ipcRenderer.removeListener('maka:message', forward)
  },
})
