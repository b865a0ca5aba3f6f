/**
 * The floor of a ledger command: read the ledger file and JSON.parse each line, keeping the rows
 * (a plan needs every event). `node readParse.mjs <ledger>`.
 */
import { readFileSync } from 'node:fs'

const text = readFileSync(process.argv[2], 'utf8')
const rows = []
let start = 0
for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
  rows.push(JSON.parse(text.slice(start, end)))
  start = end + 1
}
process.stdout.write(`${rows.length}\n`)
