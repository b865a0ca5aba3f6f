/**
 * @maka/cli — the `maka` command-line and terminal UI host. It only composes packages; the public
 * surface is the program itself (for embedding and tests) and its exit codes.
 */
export { ExitCode, BadInputError } from './ExitCode.js'
export { buildProgram, main } from './program.js'
export { DEMO_CRASH_POINTS, type GlobalFlags } from './CommandFlags.js'
