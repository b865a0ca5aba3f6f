/**
 * The floor of a whole-data-dir command: a recursive walk of `sessions/` that reads and parses
 * every file in it — each `.json` with JSON.parse, each `.jsonl` line by line. `node walk.mjs <dataDir>`.
 */
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'

let files = 0
const parseFile = async (path) => {
  const text = await readFile(path, 'utf8')
  files += 1
  if (!path.endsWith('.jsonl')) return JSON.parse(text)
  for (const line of text.split('\n')) if (line !== '') JSON.parse(line)
}

// Sixteen directories at a time, like the command it is the floor of.
const walk = async (dir) => {
  const entries = await readdir(dir, { withFileTypes: true })
  const dirs = []
  for (const entry of entries) {
    if (entry.isDirectory()) dirs.push(join(dir, entry.name))
    else await parseFile(join(dir, entry.name))
  }
  for (let i = 0; i < dirs.length; i += 16) await Promise.all(dirs.slice(i, i + 16).map(walk))
}

await walk(join(process.argv[2], 'sessions'))
process.stdout.write(`${files}\n`)
