/**
 * The floor of the tool journal's cost: N durable appends at their barest. Opens a new file in DIR
 * (`O_WRONLY | O_APPEND | O_CREAT`, 0600), writes and fsyncs one row first (the ledger of a run
 * already holds its durable first row when the tool calls begin), then N × (`write` of one row of
 * BYTES bytes, its newline included, + `fsync`), then closes and removes the file. With OUT it
 * writes the nanoseconds of the N appends alone to OUT.
 *
 * With GAP_US, each append comes after GAP_US microseconds of busy work that is not timed: an append
 * of the tool journal comes after the tool call's own work, never right after another append, and on
 * the machines we measured an fsync costs more after a pause than back to back (decision 241).
 * `node writeFsync.mjs DIR N BYTES [OUT] [GAP_US]`. Run with N = 0, it is the same process without
 * the N appends, so the two differ by exactly them.
 */
import { closeSync, constants, fsyncSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'

const [dir, count, bytes, out] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), process.argv[5]]
const gapNs = BigInt(Math.round(Number(process.argv[6] ?? 0) * 1000))
// Busy, not asleep: a process that computes between its appends, as a turn does (the cheaper case).
const work = (ns) => {
  const until = process.hrtime.bigint() + ns
  while (process.hrtime.bigint() < until);
}
const row = Buffer.alloc(bytes, 0x61)
row[bytes - 1] = 0x0a
const path = join(dir, `floor-${process.pid}.jsonl`)
const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600)
writeSync(fd, row)
fsyncSync(fd)
let ns = 0n
for (let i = 0; i < count; i += 1) {
  if (gapNs > 0n) work(gapNs)
  const started = process.hrtime.bigint()
  writeSync(fd, row)
  fsyncSync(fd)
  ns += process.hrtime.bigint() - started
}
closeSync(fd)
rmSync(path)
if (out !== undefined) writeFileSync(out, `${ns}\n`)
