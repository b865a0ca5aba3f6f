/**
 * Test support: run the BUILT `maka` with plain `node`, temp data dirs, a tree hash to prove that
 * nothing changed on disk, an interrupted session made by SIGKILLing a real `maka run`, and polling.
 */
import { execFile, execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, rmSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { setPriority, tmpdir, userInfo } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const CLI = resolve(fileURLToPath(new URL('.', import.meta.url)), '../dist/bin.cjs')

if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "pnpm --filter @maka/cli run build" first.`)

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** The environment of a CLI run: no inherited MAKA_* variables, the resume flag only when asked. */
export const cliEnv = (flag: boolean): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
  delete env['MAKA_HOME']
  delete env['MAKA_STORE']
  delete env['MAKA_RUNTIME_SAFE_BOUNDARY_RESUME']
  delete env['MAKA_RUNTIME_TOOL_JOURNAL']
  delete env['MAKA_API_KEY']
  if (flag) env['MAKA_RUNTIME_SAFE_BOUNDARY_RESUME'] = '1'
  return env
}

/** Runs `node dist/bin.cjs …args`, optionally in another cwd or as another user. */
export const runCli = (
  args: ReadonlyArray<string>,
  options: {
    readonly flag?: boolean
    readonly cwd?: string
    readonly uid?: number
    readonly gid?: number
    /** More environment (e.g. `MAKA_RUNTIME_TOOL_JOURNAL=0`). */
    readonly env?: NodeJS.ProcessEnv
  } = {},
): Promise<CliResult> =>
  new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      {
        env: { ...cliEnv(options.flag === true), ...options.env },
        timeout: 45_000,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...(options.uid === undefined ? {} : { uid: options.uid }),
        ...(options.gid === undefined ? {} : { gid: options.gid }),
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
        done({ code, stdout, stderr })
      },
    )
  })

/** Parses the stdout of a `--json` command. */
export const json = <A = Record<string, unknown>>(result: CliResult): A => JSON.parse(result.stdout) as A

/** Parses the newline-delimited stdout of `run --json` / `resume --json`: one object per line. */
export const jsonLines = (result: CliResult): ReadonlyArray<Record<string, unknown>> =>
  result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)

/** The `plan` and `result` objects of a `resume --json` stream. */
export const resumeJson = <P>(result: CliResult): { readonly plan: P; readonly result: { readonly _tag: string } } => {
  const lines = jsonLines(result)
  const plan = lines.find((line) => line['type'] === 'plan')?.['plan'] as P
  const outcome = lines.find((line) => line['type'] === 'result')?.['result'] as { readonly _tag: string }
  return { plan, result: outcome }
}

const made: Array<string> = []

/** Removes every temp dir made by `scratch` or handed to `removeLater` (call it in `afterAll`). */
export const removeScratch = async (): Promise<void> => {
  // A child a test stopped (a chat in tmux, `maka ui`) may still be writing its last row as the
  // folder goes: retry what it emptied under us (ENOTEMPTY) instead of failing the suite.
  await Promise.all(
    made.splice(0).map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 })),
  )
}

/** Removes a folder the CLI left behind (e.g. `demo --keep`) with the other temp dirs. */
export const removeLater = (dir: string): void => {
  made.push(dir)
}

/** Where `tmux -L name` puts its socket, so a test can remove it after `kill-server`. */
/**
 * Runs `maka …args` with its own TMPDIR, so a test can see what it leaves behind, and at a lower
 * priority (inherited by its children): a chaos run keeps a core busy for a while, and the CLI tests
 * beside it keep their pace on a small machine.
 */
export const runChaosCli = (args: ReadonlyArray<string>, tmp: string, timeoutMs: number): Promise<CliResult> =>
  new Promise((done) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...cliEnv(false), TMPDIR: tmp }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
        done({ code, stdout, stderr })
      },
    )
    try {
      if (child.pid !== undefined) setPriority(child.pid, 10)
    } catch {
      // Already gone (bad input exits at once): there is nothing to lower.
    }
  })

/** A new temp folder, removed with the scratch. */
export const freshTmp = async (prefix: string): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  removeLater(dir)
  return dir
}

export const tmuxSocketPath = (name: string): string =>
  join(process.env['TMUX_TMPDIR'] ?? '/tmp', `tmux-${userInfo().uid}`, name)

/** A fresh temp dir with a data dir path (not created) and a workspace (created). */
export const scratch = async (): Promise<{ root: string; dataDir: string; workspace: string }> => {
  const root = await mkdtemp(join(tmpdir(), 'maka-cli-test-'))
  made.push(root)
  const workspace = join(root, 'ws')
  await mkdir(workspace)
  await writeFile(join(workspace, 'hello.txt'), 'hello SECRET-RESULT\n')
  return { root, dataDir: join(root, 'data'), workspace }
}

/** Writes a script file and returns its path. */
export const scriptFile = async (root: string, name: string, steps: ReadonlyArray<unknown>): Promise<string> => {
  const path = join(root, name)
  await writeFile(path, JSON.stringify(steps))
  return path
}

/** sha256 over every path (files and folders) and file content under `dir`; 'absent' when missing. */
export const hashTree = async (dir: string): Promise<string> => {
  if (!existsSync(dir)) return 'absent'
  const hash = createHash('sha256')
  const walk = async (path: string, rel: string): Promise<void> => {
    let entries
    try {
      entries = await readdir(path, { withFileTypes: true })
    } catch {
      hash.update(`file:${rel}\n`)
      hash.update(await readFile(path))
      return
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const child = join(path, entry.name)
      if (entry.isDirectory()) {
        hash.update(`dir:${rel}/${entry.name}\n`)
        await walk(child, `${rel}/${entry.name}`)
      } else {
        hash.update(`file:${rel}/${entry.name}\n`)
        hash.update(await readFile(child))
      }
    }
  }
  await walk(dir, '')
  return hash.digest('hex')
}

/** Polls until `check` returns a value (not undefined/false) or the deadline passes. */
export const waitFor = async <A>(
  what: string,
  check: () => A | Promise<A>,
  deadlineMs = 30_000,
): Promise<Exclude<A, false | undefined>> => {
  const end = Date.now() + deadlineMs
  let last: A | undefined
  while (Date.now() < end) {
    last = await check()
    if (last !== undefined && last !== false) return last as Exclude<A, false | undefined>
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/**
 * Makes a session whose turn was killed with SIGKILL right after a tool result was committed: a real
 * `maka run` (resume flag on, so it records its workspace identity) with a script that waits after
 * its first tool call.
 */
export const interruptedSession = async (
  dataDir: string,
  workspace: string,
  sessionId: string,
  root: string,
  extraEnv: NodeJS.ProcessEnv = {},
  turn: {
    /** More flags of the run (`--yes`). */
    readonly args?: ReadonlyArray<string>
    /** The resume flag; on unless told otherwise. */
    readonly flag?: boolean
    readonly prompt?: string
  } = {},
): Promise<void> => {
  const script = await scriptFile(root, `slow-${sessionId}.json`, [
    { toolCall: { name: 'list_dir', args: { path: '.' } } },
    { delayMs: 60_000 },
    { text: 'never reached' },
  ])
  await new Promise<void>((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        'run',
        '--data-dir',
        dataDir,
        '--session',
        sessionId,
        '--cwd',
        workspace,
        '--script',
        script,
        ...(turn.args ?? []),
        turn.prompt ?? 'list the files',
      ],
      { env: { ...cliEnv(turn.flag ?? true), ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`the run never committed its tool result: ${out}`))
    }, 60_000)
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      out += chunk
      if (out.includes('function_response')) child.kill('SIGKILL')
    })
    child.on('close', (_code, signal) => {
      clearTimeout(timer)
      if (signal === 'SIGKILL') done()
      else fail(new Error(`the run ended by itself: ${out}`))
    })
  })
}

/** The parsed rows of a run's ledger. */
export const ledgerRows = async (
  dataDir: string,
  sessionId: string,
  runId: string,
): Promise<ReadonlyArray<Record<string, unknown>>> =>
  (await readFile(join(dataDir, 'sessions', sessionId, 'runs', runId, 'runtime-events.jsonl'), 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)

/** The run headers of a session. */
export const runHeaders = async (
  dataDir: string,
  sessionId: string,
): Promise<ReadonlyArray<Record<string, unknown>>> => {
  const dir = join(dataDir, 'sessions', sessionId, 'runs')
  const ids = await readdir(dir)
  return Promise.all(
    ids.map(async (id) => JSON.parse(await readFile(join(dir, id, 'run.json'), 'utf8')) as Record<string, unknown>),
  )
}

/**
 * `maka chat` in a tmux pane of its own server: `open` starts it (the pane prints `exit=<code>` when
 * the chat ends), `screen` reads the pane, `keys`/`press`/`type`/`paste` send input, `close` removes the server.
 */
export const tmuxChat = (name: string, size: { readonly columns: number; readonly rows: number }) => {
  let socket = ''
  let counter = 0
  const tmux = (...args: ReadonlyArray<string>): string =>
    execFileSync('/usr/bin/tmux', ['-L', socket, ...args], { encoding: 'utf8' })
  const screen = (): string => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', 'chat')
  /** The pane's rows as the terminal shows them (rows the terminal wrapped are not joined). */
  const rows = (): ReadonlyArray<string> => tmux('capture-pane', '-p', '-S', '-200', '-t', 'chat').split('\n')
  /** Pastes text as a terminal does (bracketed when the program asked for it). */
  const paste = (text: string) => {
    tmux('set-buffer', '-b', 'maka-paste', text)
    tmux('paste-buffer', '-p', '-d', '-b', 'maka-paste', '-t', 'chat')
  }
  const keys = (text: string) => tmux('send-keys', '-t', 'chat', '-l', text)
  const press = (...names: ReadonlyArray<string>) => tmux('send-keys', '-t', 'chat', ...names)
  const type = (text: string) => {
    keys(text)
    press('Enter')
  }
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`
  const open = async (
    args: ReadonlyArray<string>,
    flag: boolean,
    extraEnv: ReadonlyArray<string> = [],
  ): Promise<void> => {
    socket = `maka-${name}-${process.pid}-${++counter}`
    const command = [
      'env',
      'NO_COLOR=1',
      ...(flag ? ['MAKA_RUNTIME_SAFE_BOUNDARY_RESUME=1'] : []),
      ...extraEnv.map(quote),
      quote(process.execPath),
      quote(CLI),
      'chat',
      ...args.map(quote),
    ].join(' ')
    const pane = `${command}; echo "exit=$?"; sleep 60`
    tmux('new-session', '-d', '-s', 'chat', '-x', String(size.columns), '-y', String(size.rows), pane)
    await waitFor('startup recovery', () => screen().includes('Startup recovery:'))
  }
  const close = (): void => {
    // Never opened: there is no server to stop.
    if (socket === '') return
    try {
      tmux('kill-server')
    } catch {
      // Already gone.
    }
    rmSync(tmuxSocketPath(socket), { force: true })
  }
  return { screen, rows, paste, keys, press, type, open, close }
}

/**
 * A turn of the hidden demo child (`maka __demo-child`), SIGKILLed when it reaches the crash point
 * `at`; with `script`, the scripted model follows that file instead of the demo's script.
 */
export const killedDemoTurn = (
  dirs: { readonly dataDir: string; readonly workspace: string },
  sessionId: string,
  at: string,
  options: { readonly script?: string; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<void> =>
  new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        '__demo-child',
        '--data-dir',
        dirs.dataDir,
        '--session',
        sessionId,
        '--cwd',
        dirs.workspace,
        '--at',
        at,
        ...(options.script === undefined ? [] : ['--script', options.script]),
      ],
      { env: { ...cliEnv(true), ...options.env }, stdio: ['pipe', 'pipe', 'inherit'] },
    )
    let out = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`the demo child never reached ${at}: ${out}`))
    }, 60_000)
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      out += chunk
      if (out.includes('"type":"ready"')) child.kill('SIGKILL')
    })
    child.on('close', (_code, signal) => {
      clearTimeout(timer)
      if (signal === 'SIGKILL') done()
      else fail(new Error(`the demo child ended by itself: ${out}`))
    })
  })

/** The command of `runningCommandSession`: it kills its agent, then runs until `release` exists (5 min at most). */
export const RUNNING_COMMAND =
  'kill -9 $MAKA_AGENT_PID; i=0; while [ ! -f release ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i+1)); done; echo released'

/**
 * Makes a session whose turn died inside a foreground `shell` call that is still running: a real
 * `maka run` with the tool journal, whose command (under the supervisor) kills the agent with SIGKILL
 * and then runs until a file `release` appears in the workspace. The command's timeout is long, so
 * a resume waits for it for as long as a test needs.
 */
export const runningCommandSession = async (
  dirs: { readonly root: string; readonly dataDir: string; readonly workspace: string },
  sessionId: string,
): Promise<void> => {
  const script = await scriptFile(dirs.root, `running-${sessionId}.json`, [
    { toolCall: { name: 'shell', args: { command: RUNNING_COMMAND, timeoutMs: 600_000 } } },
    { text: 'never reached' },
  ])
  await new Promise<void>((done, fail) => {
    const child = spawn(
      process.execPath,
      [
        CLI,
        'run',
        '--data-dir',
        dirs.dataDir,
        '--session',
        sessionId,
        '--cwd',
        dirs.workspace,
        '--yes',
        '--script',
        script,
        'build it',
      ],
      { env: { ...cliEnv(true), MAKA_RUNTIME_TOOL_JOURNAL: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`the run was never killed by its command: ${out}`))
    }, 60_000)
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => (out += chunk))
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => (out += chunk))
    child.on('close', (_code, signal) => {
      clearTimeout(timer)
      if (signal === 'SIGKILL') done()
      else fail(new Error(`the run ended by itself: ${out}`))
    })
  })
}
