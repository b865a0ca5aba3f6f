/**
 * The floor of a command on a SQL store: a bare `SELECT` of the rows the command reads, each
 * `JSON.parse`d and kept, on one connection, nothing else.
 *   `node selectParse.mjs sqlite:FILE|postgres://… ledger SESSION` — every event row of the session's
 *     runs, in order (what `resume plan` reads), in pages of 10,000 rows by (run, seq), as a reader
 *     that streams must;
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

// One keyset page after (run, seq), in the order the ledger is read.
const ledgerPage = {
  sqlite:
    'SELECT run_id, seq, row FROM events WHERE session_id = ? AND (run_id > ? OR (run_id = ? AND seq > ?)) ' +
    'ORDER BY run_id, seq LIMIT ?',
  postgres:
    'SELECT run_id, seq, row FROM events WHERE session_id = $1 AND (run_id, seq) > ($2, $3) ORDER BY run_id, seq LIMIT $4',
}

if (store.startsWith('sqlite:')) {
  const db = new Database(store.slice('sqlite:'.length), { readonly: true })
  if (what === 'ledger') {
    const page = db.prepare(ledgerPage.sqlite).raw()
    let after = ['', 0]
    for (;;) {
      const rows = page.all(sessionId, after[0], after[0], after[1], PAGE)
      for (const r of rows) keep(r[2])
      if (rows.length < PAGE) break
      const last = rows[rows.length - 1]
      after = [last[0], last[1]]
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
    let after = ['', 0]
    for (;;) {
      const { rows } = await client.query({
        text: ledgerPage.postgres,
        values: [sessionId, after[0], after[1], PAGE],
        rowMode: 'array',
      })
      for (const r of rows) keep(r[2])
      if (rows.length < PAGE) break
      const last = rows[rows.length - 1]
      after = [last[0], last[1]]
    }
  } else {
    for (const r of (await client.query({ text: 'SELECT record FROM sessions', rowMode: 'array' })).rows) keep(r[0])
    for (const r of (await client.query({ text: 'SELECT header FROM runs', rowMode: 'array' })).rows) keep(r[0])
  }
  await client.end()
}
process.stdout.write(`${kept.length}\n`)
