/**
 * Ledgers the product cannot trust, through the built CLI on real data dirs: a final line that is
 * not a torn row, and a repeated event id. Neither recovery nor a resume may cut such a ledger or
 * continue from it, and the read-only commands leave every byte of the data dir as it was.
 */
import { createHash } from 'node:crypto'
import { appendFile, cp, readFile, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  hashTree,
  interruptedSession,
  type CliResult,
  removeScratch,
  runCli,
  runHeaders,
  scratch,
  scriptFile,
} from './support.js'

afterAll(removeScratch)

interface PlanJson {
  readonly disposition: string
  readonly rejectionReasons: ReadonlyArray<string>
  readonly diagnostics: ReadonlyArray<{ readonly code: string; readonly detail: Record<string, unknown> }>
}

const ledgerOf = async (dataDir: string, sessionId: string): Promise<string> => {
  const runs = join(dataDir, 'sessions', sessionId, 'runs')
  const [runId] = await readdir(runs)
  return join(runs, runId!, 'runtime-events.jsonl')
}

const sha = async (path: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex')

// One session SIGKILLed mid-turn by a real `maka run`, copied for each case (a crash per case would
// only add load).
let template: { readonly dataDir: string; readonly workspace: string }
beforeAll(async () => {
  const env = await scratch()
  await interruptedSession(env.dataDir, env.workspace, 'cut', env.root)
  template = env
}, 120_000)

/** A copy of the template's session `cut` as session `sessionId` in `dataDir`, its ledger then damaged. */
const addDamagedSession = async (
  dataDir: string,
  sessionId: string,
  damage: (rows: ReadonlyArray<string>) => Buffer,
): Promise<string> => {
  const from = join(template.dataDir, 'sessions', 'cut')
  const to = join(dataDir, 'sessions', sessionId)
  await cp(from, to, { recursive: true })
  if (sessionId !== 'cut') {
    // Every record names its session: rename it throughout, so the copy is a session of its own.
    for (const file of [join(to, 'session.json'), ...(await runFiles(to))]) {
      await writeFile(
        file,
        (await readFile(file, 'utf8')).replaceAll('"sessionId":"cut"', `"sessionId":"${sessionId}"`),
      )
    }
  }
  const ledger = await ledgerOf(dataDir, sessionId)
  const rows = (await readFile(ledger, 'utf8')).split('\n').filter((row) => row !== '')
  await appendFile(ledger, damage(rows))
  return ledger
}

const runFiles = async (sessionDir: string): Promise<ReadonlyArray<string>> => {
  const runs = join(sessionDir, 'runs')
  const files: Array<string> = []
  for (const runId of await readdir(runs)) {
    for (const name of await readdir(join(runs, runId))) {
      if (name.endsWith('.json') || name.endsWith('.jsonl')) files.push(join(runs, runId, name))
    }
  }
  return files
}

/** A data dir holding the interrupted session, its ledger then damaged by `damage`. */
const givenDamagedSession = async (damage: (rows: ReadonlyArray<string>) => Buffer) => {
  const env = await scratch()
  const ledger = await addDamagedSession(env.dataDir, 'cut', damage)
  return { ...env, ledger, data: ['--data-dir', env.dataDir] }
}

const tails: ReadonlyArray<readonly [string, (rows: ReadonlyArray<string>) => Buffer]> = [
  ['garbage', () => Buffer.from('this is not a row')],
  ['binary', () => Buffer.from([0x00, 0xff, 0x13, 0x37, 0x7b, 0x0d])],
  // A whole row whose newline is missing: not committed, yet not provably torn either.
  ['a complete row without its newline', (rows) => Buffer.from(rows[0]!.replace(/"id":"[^"]+"/, '"id":"extra-row"'))],
]

/** `resume --json` prints NDJSON: a `plan` line, then a `result` line. */
const resumeOutput = (resumed: CliResult): { plan: PlanJson; result: { _tag: string } } => {
  const lines = resumed.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { type: string; plan?: PlanJson; result?: { _tag: string } })
  const plan = lines.find((line) => line.type === 'plan')?.plan
  const result = lines.find((line) => line.type === 'result')?.result
  if (plan === undefined || result === undefined) throw new Error(`no plan and result lines in: ${resumed.stdout}`)
  return { plan, result }
}

describe('maka over a ledger it cannot trust', () => {
  describe.each(tails)('when the final line is %s', (_name, damage) => {
    it('recovery leaves the ledger byte for byte, and resume parks runtime_ledger_unreadable without a continuation', async () => {
      const { ledger, data, root } = await givenDamagedSession(damage)
      const before = await sha(ledger)

      const recovered = await runCli(['recover', ...data, '--json'])
      expect(recovered.code).toBe(0)
      expect(await sha(ledger)).toBe(before)

      const script = await scriptFile(root, 'cont.json', [{ text: 'must never run' }])
      const resumed = await runCli(['resume', ...data, '--session', 'cut', '--script', script, '--json'], {
        flag: true,
      })
      expect(resumed.code).toBe(3)
      const { plan, result } = resumeOutput(resumed)
      expect(result._tag).toBe('Parked')
      expect(plan.rejectionReasons).toEqual(['runtime_ledger_unreadable'])
      expect(await sha(ledger)).toBe(before)
      expect(await runHeaders(data[1]!, 'cut')).toHaveLength(1)
      const rows = (await readFile(ledger, 'utf8')).split('\n').length
      expect(plan.diagnostics.find((d) => d.code === 'runtime_ledger_unreadable')?.detail).toMatchObject({
        line: rows,
      })
    }, 180_000)
  })

  describe('when a row repeats the id of an earlier row', () => {
    it('resume parks runtime_ledger_unreadable at the repeat, and no continuation is created', async () => {
      // A second user row under the first one's id: without the id check it would plan `continue`.
      const { ledger, data, root } = await givenDamagedSession((rows) => {
        const first = JSON.parse(rows[0]!) as Record<string, unknown>
        return Buffer.from(`${JSON.stringify({ ...first, ts: (first['ts'] as number) + 1 })}\n`)
      })
      const before = await sha(ledger)
      const line = (await readFile(ledger, 'utf8')).split('\n').length - 1
      const script = await scriptFile(root, 'cont.json', [{ text: 'must never run' }])
      const resumed = await runCli(['resume', ...data, '--session', 'cut', '--script', script, '--json'], {
        flag: true,
      })
      expect(resumed.code).toBe(3)
      const { plan, result } = resumeOutput(resumed)
      expect(result._tag).toBe('Parked')
      expect(plan.rejectionReasons).toEqual(['runtime_ledger_unreadable'])
      expect(plan.diagnostics.find((d) => d.code === 'runtime_ledger_unreadable')?.detail).toMatchObject({ line })
      expect(await runHeaders(data[1]!, 'cut')).toHaveLength(1)
      expect(await sha(ledger)).toBe(before)
    }, 180_000)
  })

  describe('when the read-only commands look at such ledgers', () => {
    it('sessions, show and resume plan --no-recover change no byte of the data dir', async () => {
      const env = await scratch()
      const data = ['--data-dir', env.dataDir]
      const damages: ReadonlyArray<(rows: ReadonlyArray<string>) => Buffer> = [
        ...tails.map(([, damage]) => damage),
        (rows) => Buffer.from(`${rows[0]}\n`), // a repeated id
        (rows) => Buffer.from(rows[1]!.slice(0, 30)), // a torn row
      ]
      for (const [i, damage] of damages.entries()) await addDamagedSession(env.dataDir, `s${i}`, damage)
      const before = await hashTree(env.dataDir)
      const commands: ReadonlyArray<ReadonlyArray<string>> = [
        ['sessions'],
        ['sessions', '--json'],
        ...damages.flatMap((_, i) => [
          ['show', `s${i}`, '--json'],
          ['resume', 'plan', '--session', `s${i}`, '--no-recover', '--json'],
        ]),
      ]
      for (const command of commands) {
        const result = await runCli([...command, ...data], { flag: true })
        expect(result.code, `${command.join(' ')}: ${result.stderr}`).not.toBe(1)
        expect(await hashTree(env.dataDir), command.join(' ')).toBe(before)
      }
    }, 300_000)
  })
})
