// One desktop app instance's start-up (recovery, then auto-continuation) in its own process,
// printing its report as one JSON line once every continuation it started has ended.
import { makeSessionServices } from '@maka/session-ui'

const services = makeSessionServices({ dataDir: process.argv[2], safeResume: true, emit: () => {} })
const report = await services.startup()
await services.idle()
process.stdout.write(`${JSON.stringify(report)}\n`)
