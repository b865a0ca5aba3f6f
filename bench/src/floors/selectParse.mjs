/**
 * The floor of a command on a SQL store: a bare `SELECT` of the rows the command reads, each
 * `JSON.parse`d and kept, on one connection, nothing else.
 *   `node selectParse.mjs sqlite:FILE|postgres://… ledger SESSION` — every event row of each of the
 *     session's runs, in order (what `resume plan` reads), in pages of 10,000 rows by seq on the
 *     primary key, as a reader that streams must;
 *   `node selectParse.mjs sqlite:FILE|postgres://… headers` — every session record and run header
 *     (what `recover` reads on a data dir where no run is left running).
 * Prints the number of rows.
 */
import Database from 'better-sqlite3'
import pg from 'pg'

const [store, what, sessionId] = process.argv.slice(2)
const PAGE = 10_000
const kept = []
const keep = (text) => kept.push(JSON.parse(text))

// The session's runs, then one keyset page of a run's ledger after a seq: the primary key's order.
const runsOf = {
  sqlite: 'SELECT run_id FROM runs WHERE session_id = ? ORDER BY run_id',
  postgres: 'SELECT run_id FROM runs WHERE session_id = $1 ORDER BY run_id',
}
const ledgerPage = {
  sqlite: 'SELECT seq, row FROM events WHERE session_id = ? AND run_id = ? AND seq > ? ORDER BY seq LIMIT ?',
  postgres: 'SELECT seq, row FROM events WHERE session_id = $1 AND run_id = $2 AND seq > $3 ORDER BY seq LIMIT $4',
}

if (store.startsWith('sqlite:')) {
  const db = new Database(store.slice('sqlite:'.length), { readonly: true })
  if (what === 'ledger') {
    const page = db.prepare(ledgerPage.sqlite).raw()
    for (const [runId] of db.prepare(runsOf.sqlite).raw().all(sessionId)) {
      for (let after = 0; ;) {
        const rows = page.all(sessionId, runId, after, PAGE)
        for (const r of rows) keep(r[1])
        if (rows.length < PAGE) break
        after = rows[rows.length - 1][0]
      }
    }
  } else {
    for (const r of db.prepare('SELECT record FROM sessions').raw().iterate()) keep(r[0])
    for (const r of db.prepare('SELECT header FROM runs').raw().iterate()) keep(r[0])
  }
  db.close()
} else {
  const client = new pg.Client({ connectionString: store })
  await client.connect()
  if (what === 'ledger') {
    const runs = await client.query({ text: runsOf.postgres, values: [sessionId], rowMode: 'array' })
    for (const [runId] of runs.rows) {
      for (let after = 0; ;) {
        const { rows } = await client.query({
          text: ledgerPage.postgres,
          values: [sessionId, runId, after, PAGE],
          rowMode: 'array',
        })
        for (const r of rows) keep(r[1])
        if (rows.length < PAGE) break
        after = rows[rows.length - 1][0]
      }
    }
  } else {
    for (const r of (await client.query({ text: 'SELECT record FROM sessions', rowMode: 'array' })).rows) keep(r[0])
    for (const r of (await client.query({ text: 'SELECT header FROM runs', rowMode: 'array' })).rows) keep(r[0])
  }
  await client.end()
}
process.stdout.write(`${kept.length}\n`)
