/**
 * The renderer's entry: `window.maka` from the Electron preload, else the HTTP bridge of `maka ui`.
 */
import { createRoot } from 'react-dom/client'
import type { MakaApi } from '../hostContract/api.js'
import { App } from './App.js'
import { connectHttp } from './httpBridge.js'
import './styles.css'

declare global {
  interface Window {
    maka?: MakaApi
  }
}

const root = createRoot(document.getElementById('root') as HTMLElement)
const start = async (): Promise<void> => {
  try {
    const api = window.maka ?? (await connectHttp(window.location))
    root.render(<App api={api} />)
  } catch (error) {
    root.render(
      <p className="fatal" role="alert">
        {error instanceof Error ? error.message : String(error)}
      </p>,
    )
  }
}
void start()
