/**
 * Loaded into a timed process with `node --require`: at exit, writes the process's own CPU time
 * (user + system, µs, every thread) and its voluntary context switches to `$BENCH_CPU_OUT`, so the
 * journal group can split a turn's cost into work and waiting without the machine's load blurring it.
 */
'use strict'
const { writeFileSync } = require('node:fs')

process.on('exit', () => {
  const usage = process.resourceUsage()
  writeFileSync(
    process.env.BENCH_CPU_OUT,
    `${usage.userCPUTime + usage.systemCPUTime} ${usage.voluntaryContextSwitches}\n`,
  )
})
