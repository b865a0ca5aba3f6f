/**
 * The database's schema, versioned with `PRAGMA user_version`: migration `n` takes a database from
 * version `n` to `n + 1`, each in its own transaction, so a crash mid-migration leaves the previous
 * version whole. A database newer than this code is refused, never written.
 */

/**
 * The migrations, oldest first; never edit one that has shipped, append a new one.
 * @category models
 */
export const MIGRATIONS: ReadonlyArray<string> = [
  `
  -- Every session a write has touched (the JSONL session folder): listed even before session.json.
  CREATE TABLE session_ids (session_id TEXT PRIMARY KEY) STRICT;
  CREATE TABLE sessions (session_id TEXT PRIMARY KEY, record TEXT NOT NULL) STRICT;
  CREATE TABLE runs (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    header TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id)
  ) STRICT;
  -- One row per ledger line; seq is the row's 1-based high-water. The row is the event's JSON text,
  -- exactly what a JSONL line holds, decoded on read with the same codecs.
  CREATE TABLE events (
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_id TEXT,
    row TEXT NOT NULL,
    PRIMARY KEY (session_id, run_id, seq),
    UNIQUE (session_id, run_id, event_id)
  ) STRICT;
  CREATE TABLE shell_runs (
    session_id TEXT NOT NULL,
    shell_run_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (session_id, shell_run_id)
  ) STRICT;
  -- The claim's uniqueness is the boundary: (session, source run, high-water).
  CREATE TABLE claims (
    session_id TEXT NOT NULL,
    source_run_id TEXT NOT NULL,
    high_water INTEGER NOT NULL,
    record TEXT NOT NULL,
    UNIQUE (session_id, source_run_id, high_water)
  ) STRICT;
  CREATE TABLE owner_locks (session_id TEXT PRIMARY KEY, record TEXT NOT NULL) STRICT;
  `,
]

/**
 * The schema version this code writes.
 * @category models
 */
export const SCHEMA_VERSION = MIGRATIONS.length
