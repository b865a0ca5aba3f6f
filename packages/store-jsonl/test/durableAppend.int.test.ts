/**
 * What `capabilities.durableAppend: true` promises for the JSONL files, checked call by call through
 * a recording filesystem port: a durable append is one `O_APPEND` write of the row's JSON and its
 * newline, then an fsync of the ledger, then an fsync of every folder from the run's up to the data
 * dir, and it resolves only after the last of them (docs/decisions.md #150).
 */
import { constants } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  claimPath,
  ledgerPath,
  makeFileStores,
  nodeStoreFs,
  runHeaderPath,
  type StoreFile,
  type StoreFs,
} from '../src/index.js'
import {
  claimAndHeader,
  identity,
  makeTempRoot,
  referenceLedger,
  removeTempRoots,
  runHeader,
  targetIdentity,
  value,
} from './fixtures/world.js'

afterAll(removeTempRoots)

const { sessionId, runId } = identity
// The access-mode bits of open(2)'s flags (O_ACCMODE, which node does not export).
const ACCESS = constants.O_WRONLY | constants.O_RDWR

interface Call {
  readonly call: 'open' | 'write' | 'fsync'
  readonly path: string
  readonly flags?: number
  readonly bytes?: Buffer
}

// Node's port, recording opens, writes and fsyncs; an fsync of `hold` waits for `release`.
const recordingFs = (hold: string) => {
  const calls: Array<Call> = []
  let release: () => void = () => undefined
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let reached: () => void = () => undefined
  const held = new Promise<void>((resolve) => {
    reached = resolve
  })
  const wrap = (path: string, file: StoreFile): StoreFile => ({
    ...file,
    write: (buffer, offset, length) => {
      calls.push({ call: 'write', path, bytes: Buffer.from(buffer.subarray(offset, offset + length)) })
      return file.write(buffer, offset, length)
    },
    sync: async () => {
      calls.push({ call: 'fsync', path })
      if (path === hold) {
        reached()
        await released
      }
      return file.sync()
    },
  })
  const fs: StoreFs = {
    ...nodeStoreFs,
    open: async (path, flags, mode) => {
      calls.push({ call: 'open', path, flags })
      return wrap(path, await nodeStoreFs.open(path, flags, mode))
    },
  }
  return { fs, calls, release, held }
}

describe('a durable append to a JSONL ledger', () => {
  describe('when the store instance has not yet made the run’s folders durable', () => {
    it('writes the row once with O_APPEND, fsyncs the file, then each folder up to the data dir, and only then resolves', async () => {
      const dataDir = await makeTempRoot()
      await value(makeFileStores(dataDir).runs.create(runHeader()))
      const recording = recordingFs(dataDir)
      const stores = makeFileStores(dataDir, { fs: recording.fs })
      expect(stores.capabilities).toEqual({ durableAppend: true })
      const [row] = referenceLedger()
      let settled = false
      const appended = value(stores.events.append(sessionId, runId, row!, { durable: true })).then((result) => {
        settled = true
        return result
      })
      await recording.held
      // Every fsync but the data dir's is done, and the append has not resolved.
      expect(settled).toBe(false)
      recording.release()
      expect(await appended).toEqual({ highWater: 1 })

      const ledger = ledgerPath(dataDir, sessionId, runId)
      const bytes = await readFile(ledger)
      expect(bytes.toString('utf8')).toBe(`${JSON.stringify(row)}\n`)
      const onLedger = recording.calls.filter((c) => c.path === ledger)
      // The append's descriptor, then a read-only one: a new instance scans a ledger it has not seen.
      expect(onLedger.map((c) => c.call)).toEqual(['open', 'open', 'write', 'fsync'])
      const [appending, scanning] = onLedger.map((c) => c.flags!)
      expect(appending! & constants.O_APPEND).toBe(constants.O_APPEND)
      expect(appending! & ACCESS).toBe(constants.O_WRONLY)
      expect(scanning! & ACCESS).toBe(constants.O_RDONLY)
      expect(onLedger[2]!.bytes).toEqual(bytes)
      const runFolder = dirname(ledger)
      const folders = [runFolder, dirname(runFolder), dirname(dirname(runFolder)), join(dataDir, 'sessions'), dataDir]
      expect(recording.calls.filter((c) => c.call === 'fsync').map((c) => c.path)).toEqual([ledger, ...folders])
      // Each folder fsync goes through its own descriptor, opened read-only as a directory.
      for (const folder of folders) {
        const opened = recording.calls.find((c) => c.call === 'open' && c.path === folder)
        expect(opened?.flags! & constants.O_DIRECTORY).toBe(constants.O_DIRECTORY)
      }
    })
  })

  describe('when the run’s folders were made durable by an earlier durable append of the instance', () => {
    it('writes and fsyncs the ledger it kept open: no open, and no folder', async () => {
      const dataDir = await makeTempRoot()
      await value(makeFileStores(dataDir).runs.create(runHeader()))
      const recording = recordingFs('')
      const stores = makeFileStores(dataDir, { fs: recording.fs })
      const [first, second] = referenceLedger()
      await value(stores.events.append(sessionId, runId, first!, { durable: true }))
      const before = recording.calls.length
      expect(await value(stores.events.append(sessionId, runId, second!, { durable: true }))).toEqual({
        highWater: 2,
      })
      const ledger = ledgerPath(dataDir, sessionId, runId)
      const calls = recording.calls.slice(before)
      expect(calls.map((c) => `${c.call} ${c.path === ledger ? 'ledger' : c.path}`)).toEqual([
        'write ledger',
        'fsync ledger',
      ])
      expect(calls[0]!.bytes!.toString('utf8')).toBe(`${JSON.stringify(second)}\n`)
    })
  })

  describe('when the append is not durable', () => {
    it('makes no fsync at all', async () => {
      const dataDir = await makeTempRoot()
      await value(makeFileStores(dataDir).runs.create(runHeader()))
      const recording = recordingFs('')
      const stores = makeFileStores(dataDir, { fs: recording.fs })
      await value(stores.events.append(sessionId, runId, referenceLedger()[0]!))
      expect(recording.calls.filter((c) => c.call === 'fsync')).toEqual([])
    })
  })
})

describe('a claim on JSONL files (decision 288)', () => {
  it('syncs the claim and its folder, then the header’s content; the target’s first durable row syncs the header’s folders', async () => {
    const dataDir = await makeTempRoot()
    const setup = makeFileStores(dataDir)
    await value(setup.runs.create(runHeader()))
    const [userRow, callRow] = referenceLedger()
    await value(setup.events.append(sessionId, runId, userRow!, { durable: true }))
    await value(setup.events.append(sessionId, runId, callRow!))
    const recording = recordingFs('')
    const stores = makeFileStores(dataDir, { fs: recording.fs })
    // A first claim makes the session's folders durable for this instance; the second is measured.
    await value(stores.claims.claimBoundary(claimAndHeader(1).claim, claimAndHeader(1).header))
    const target = { ...targetIdentity, runId: 'run-3', invocationId: 'invocation-3', turnId: 'turn-3' }
    const { claim, header } = claimAndHeader(2, target)
    const before = recording.calls.length
    await value(stores.claims.claimBoundary(claim, header))
    const synced = (from: number) =>
      recording.calls
        .slice(from)
        .filter((c) => c.call === 'fsync')
        .map((c) => c.path)
    const claimFile = claimPath(dataDir, sessionId, runId, 2)
    const headerFile = runHeaderPath(dataDir, sessionId, 'run-3')
    const claimSyncs = synced(before)
    // The claim's temp file, the claims folder (the claim is durable before the header exists), then
    // the header's temp file: three fsyncs, and none of the header's folders.
    expect(claimSyncs).toHaveLength(3)
    expect(dirname(claimSyncs[0]!)).toBe(dirname(claimFile))
    expect(claimSyncs[1]).toBe(dirname(claimFile))
    expect(dirname(claimSyncs[2]!)).toBe(dirname(headerFile))
    expect(claimSyncs[2]).not.toBe(headerFile)
    expect(JSON.parse(await readFile(headerFile, 'utf8'))).toMatchObject({ runId: 'run-3', status: 'created' })

    const afterClaim = recording.calls.length
    const [start] = referenceLedger(target)
    await value(stores.events.append(sessionId, 'run-3', start!, { durable: true }))
    const runFolder = dirname(headerFile)
    // The ledger, then the folders that hold the header's entries, on up to the first folder this
    // instance knows to be durable (runs/ was made by the claims, whose walk never passed it).
    expect(synced(afterClaim)).toEqual([
      ledgerPath(dataDir, sessionId, 'run-3'),
      runFolder,
      dirname(runFolder),
      dirname(dirname(runFolder)),
    ])
  })
})
