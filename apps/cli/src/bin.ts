#!/usr/bin/env node
/**
 * The `maka` executable: runs the CLI, then exits with its code once stdout has drained.
 */
import { main } from './program.js'

// A reader that went away (`maka show … | head`) is not an error of ours.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0)
  throw error
})

void main(process.argv).then((code) => {
  process.exitCode = code
  process.stdout.write('', () => process.exit(code))
})
