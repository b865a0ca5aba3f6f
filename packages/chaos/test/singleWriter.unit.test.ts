/**
 * The checks that catch two writers of one run — two repairers of a dead owner's session, a run that
 * ended twice, a row appended twice, a phase that left an unparsable committed row — on snapshots
 * built in memory from raw ledger text, exactly the bytes the checker reads from files or from a SQLite
 * or PostgreSQL store's rows. Each code fires on a ledger that breaks it, and stays silent on the clean
 * ledgers around it.
 */
import { describe, expect, it } from 'vitest'
import { type DataDirSnapshot, type RunFiles, type Violation, checkInvariants, emptySnapshot } from '../src/index.js'

const SESSION = 'chaos-1'
const RUN = 'run-1'

type Row = Readonly<Record<string, unknown>>

const row = (n: number, fields: Row = {}): Row => ({
  id: `${RUN}-e${n}`,
  sessionId: SESSION,
  invocationId: `inv-${RUN}`,
  runId: RUN,
  turnId: `turn-${RUN}`,
  ts: 1_700_000_000_000 + n,
  partial: false,
  role: 'model',
  author: 'agent',
  content: { kind: 'text', text: `row ${n}` },
  ...fields,
})

const userText = (n: number): Row =>
  row(n, { role: 'user', author: 'user', content: { kind: 'text', text: 'Run the chaos script.' } })

const ended = (n: number, status: 'completed' | 'failed'): Row =>
  row(n, { role: 'system', author: 'system', content: undefined, status, actions: { endInvocation: true } })

/** What recovery appends for a run whose owner died: the same id in every process that computes it. */
const recovered = (n: number): Row =>
  row(n, {
    role: 'system',
    author: 'system',
    status: 'failed',
    content: { kind: 'error', code: 'app_restarted', message: 'The process ended before the run finished.' },
    actions: {
      endInvocation: true,
      stateDelta: { failureClass: 'app_restarted', recovered: true, recoveryReason: 'app_restarted' },
    },
  })

const line = (r: Row): string => `${JSON.stringify(r)}\n`

/** A snapshot of one non-terminal run (so no header check is involved) whose ledger is `text`. */
const givenLedger = (text: string | null): DataDirSnapshot => {
  const run: RunFiles = {
    sessionId: SESSION,
    runId: RUN,
    header: Buffer.from(JSON.stringify({ runId: RUN, sessionId: SESSION, status: 'running' })),
    ledger: text === null ? null : Buffer.from(text, 'utf8'),
  }
  return { runs: new Map([[`${SESSION}/${RUN}`, run]]), claims: new Map() }
}

const check = (after: DataDirSnapshot, before: DataDirSnapshot = emptySnapshot): ReadonlyArray<Violation> =>
  checkInvariants({ before, after, effects: new Map(), tokenOf: () => null })

const codes = (violations: ReadonlyArray<Violation>) => violations.map((v) => v.code)

describe('checkInvariants: one writer per run', () => {
  describe('when the ledger is whole', () => {
    it.for([
      ['an open run', [userText(1), row(2)]],
      ['a run that ended by itself', [userText(1), row(2), ended(3, 'completed')]],
      ['a run repaired once', [userText(1), row(2), recovered(3)]],
      ['a run with no rows yet', []],
    ] as const)('reports nothing for %s', ([, rows]) => {
      expect(check(givenLedger(rows.map(line).join('')))).toEqual([])
    })

    it('reports nothing for a torn tail: an append that never completed is not committed', () => {
      const text = `${line(userText(1))}${line(recovered(2))}{"id":"run-1-e3","sessi`
      expect(check(givenLedger(text))).toEqual([])
    })
  })

  describe('when two processes appended the same recovered terminal event', () => {
    it('reports duplicate_repair and duplicate_row_id, naming the row', () => {
      const violations = check(givenLedger([userText(1), row(2), recovered(3), recovered(3)].map(line).join('')))
      expect(codes(violations)).toEqual(['duplicate_repair', 'duplicate_row_id'])
      expect(violations[0]).toMatchObject({ sessionId: SESSION, runId: RUN })
      expect(violations[0]?.message).toContain('2 recovered terminal events (rows run-1-e3, run-1-e3)')
      expect(violations[1]?.message).toContain('run-1-e3 ×2')
    })

    it('reports duplicate_repair alone when the two repairs got different ids', () => {
      const text = [userText(1), recovered(2), recovered(3)].map(line).join('')
      expect(codes(check(givenLedger(text)))).toEqual(['duplicate_repair'])
    })
  })

  describe('when a run holds more than one terminal event of its own', () => {
    it.for([
      ['ended twice', [userText(1), ended(2, 'completed'), ended(3, 'completed')]],
      ['repaired, then ended by itself', [userText(1), recovered(2), ended(3, 'failed')]],
      ['ended, then repaired', [userText(1), ended(2, 'completed'), recovered(3)]],
    ] as const)('reports duplicate_terminal when it %s', ([, rows]) => {
      const violations = check(givenLedger(rows.map(line).join('')))
      expect(codes(violations)).toEqual(['duplicate_terminal'])
      expect(violations[0]?.message).toContain('2 terminal events')
    })

    it('reports both codes when two repairs meet the run’s own end', () => {
      const text = [userText(1), ended(2, 'completed'), recovered(3), recovered(4)].map(line).join('')
      expect(codes(check(givenLedger(text)))).toEqual(['duplicate_repair', 'duplicate_terminal'])
    })
  })

  describe('when a row id repeats', () => {
    it('reports duplicate_row_id for any two rows with one id, terminal or not', () => {
      const text = [userText(1), row(2), row(2, { content: { kind: 'text', text: 'another' } })].map(line).join('')
      const violations = check(givenLedger(text))
      expect(codes(violations)).toEqual(['duplicate_row_id'])
      expect(violations[0]?.message).toBe('committed row ids repeat: run-1-e2 ×2.')
    })
  })

  describe('when a phase leaves an unparsable committed row', () => {
    const whole = [userText(1), row(2)].map(line).join('')

    it('reports ledger_unreadable_after_phase with the line, for a ledger that was whole before', () => {
      const before = givenLedger(whole)
      // Two appends that interleaved: the second one's bytes landed inside the first one's line.
      const after = givenLedger(`${whole}{"id":"run-1-e3",{"id":"run-1-e3"}\n${line(recovered(4))}`)
      const violations = check(after, before)
      expect(codes(violations)).toEqual(['ledger_unreadable_after_phase'])
      expect(violations[0]?.message).toContain('committed line 3 of the ledger is not a JSON object')
    })

    it.for([
      ['a torn tail glued to the next append', `${whole}{"id":"run-1-e3","ses${line(row(3))}`],
      ['an empty line', `${whole}\n${line(row(3))}`],
      ['a JSON value that is not an object', `${whole}[1,2]\n`],
    ] as const)('reports it for %s', ([, text]) => {
      expect(codes(check(givenLedger(text), givenLedger(whole)))).toEqual(['ledger_unreadable_after_phase'])
    })

    it('reports it for a run that did not exist before the phase', () => {
      expect(codes(check(givenLedger(`${whole}not json\n`)))).toEqual(['ledger_unreadable_after_phase'])
    })

    it('does not report it again for a ledger that was already unreadable before the phase', () => {
      const broken = `${whole}not json\n`
      expect(check(givenLedger(`${broken}${line(row(3))}`), givenLedger(broken))).toEqual([])
    })
  })
})
