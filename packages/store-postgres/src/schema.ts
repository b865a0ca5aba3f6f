/**
 * The database's schema, versioned in `maka_schema`: migration `n` takes a database from version `n`
 * to `n + 1`, each in its own transaction under a transaction-scoped advisory lock, so hosts opening
 * one fresh database at once run each migration exactly once and a crash mid-migration leaves the
 * previous version whole. A database newer than this code is refused, never written.
 */

/**
 * The migrations, oldest first; never edit one that has shipped, append a new one.
 * @category models
 */
export const MIGRATIONS: ReadonlyArray<string> = [
  `
  -- Every session a write has touched (the JSONL session folder): listed even before session.json.
  CREATE TABLE session_ids (session_id text PRIMARY KEY);
  CREATE TABLE sessions (session_id text PRIMARY KEY, record text NOT NULL);
  CREATE TABLE runs (
    session_id text NOT NULL,
    run_id text NOT NULL,
    header text NOT NULL,
    PRIMARY KEY (session_id, run_id)
  );
  -- One row per ledger line; seq is the row's 1-based high-water. The row is the event's JSON text,
  -- exactly what a JSONL line holds, decoded on read with the same codecs.
  CREATE TABLE events (
    session_id text NOT NULL,
    run_id text NOT NULL,
    seq integer NOT NULL,
    event_id text,
    row text NOT NULL,
    PRIMARY KEY (session_id, run_id, seq),
    UNIQUE (session_id, run_id, event_id)
  );
  CREATE TABLE shell_runs (
    session_id text NOT NULL,
    shell_run_id text NOT NULL,
    record text NOT NULL,
    PRIMARY KEY (session_id, shell_run_id)
  );
  -- The claim's uniqueness is the boundary: (session, source run, high-water). Its INSERT is the
  -- claim; a second one fails with SQLSTATE 23505 on this constraint.
  CREATE TABLE claims (
    session_id text NOT NULL,
    source_run_id text NOT NULL,
    high_water integer NOT NULL,
    record text NOT NULL,
    CONSTRAINT claims_boundary_key UNIQUE (session_id, source_run_id, high_water)
  );
  -- Who holds a session: the OwnerLock record, the host id and the server backend of the connection
  -- holding the session's advisory lock. A row counts only while that backend holds that lock.
  CREATE TABLE owner_locks (
    session_id text PRIMARY KEY,
    record text NOT NULL,
    host_id text NOT NULL,
    backend_pid integer NOT NULL,
    acquired_at timestamptz NOT NULL DEFAULT now()
  );
  `,
]

/**
 * The schema version this code writes.
 * @category models
 */
export const SCHEMA_VERSION = MIGRATIONS.length
