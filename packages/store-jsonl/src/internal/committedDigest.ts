/**
 * The SHA-256 of a ledger file's committed prefix, fed with the bytes the scanner consumes in file
 * order, and the prefix digest at one pin (docs/decisions.md #151): the digest of the file's bytes
 * up to the end of row `pin`, taken from a copy of the running hash as the pass goes by that row's
 * newline, so a fold reports both from one read.
 */
import { createHash, type Hash } from 'node:crypto'

const NEWLINE = 0x0a

/**
 * The digest of zero bytes: what a fold of a ledger that does not exist yet reports.
 * @category constructors
 */
export const EMPTY_DIGEST = createHash('sha256').digest('hex')

/**
 * The running digest of one pass. The scanner may consume bytes that are not committed yet (a bad
 * row it drops without carrying it); they are fed too, in case a newline commits them later, and
 * the hash state at the last committed byte is kept aside for the case it never comes.
 * @category models
 */
export interface CommittedDigest {
  /** `consumed` bytes at the front of `bytes` were consumed; `committed` is the scanner's count after. */
  feed(bytes: Uint8Array, consumed: number, committed: number): void
  /** The digest of the first `committed` bytes (the scanner's final count); ends the pass. */
  digest(committed: number): string
  /**
   * The digest of the bytes up to and including the pin's newline (`EMPTY_DIGEST` for pin 0), or
   * null when no pin was given or the pass has not reached it.
   */
  atPin(): string | null
}

/**
 * Starts the digest of one pass; `pin` is the row count to take a prefix digest at, if any.
 * @category constructors
 */
export const makeCommittedDigest = (pin?: number): CommittedDigest => {
  const hash = createHash('sha256')
  let fed = 0
  let atCommit: Hash | null = null
  // Newlines fed so far, counted only until the pin is reached.
  let newlines = 0
  let atPin: string | null = pin === 0 ? EMPTY_DIGEST : null

  // Feeds bytes [from, to) in file order, splitting at the pin's newline when it lies among them.
  const update = (bytes: Uint8Array, from: number, to: number): void => {
    if (atPin === null && pin !== undefined) {
      for (let at = from; newlines < pin;) {
        const newline = bytes.indexOf(NEWLINE, at)
        if (newline === -1 || newline >= to) break
        newlines += 1
        at = newline + 1
        if (newlines === pin) {
          hash.update(bytes.subarray(from, at))
          atPin = hash.copy().digest('hex')
          from = at
        }
      }
    }
    if (to > from) hash.update(bytes.subarray(from, to))
  }

  return {
    feed: (bytes, consumed, committed) => {
      if (consumed === 0) return
      const split = committed - fed
      if (split >= consumed) {
        update(bytes, 0, consumed)
        atCommit = null
      } else if (split >= 0) {
        update(bytes, 0, split)
        atCommit = hash.copy()
        // Past the last committed byte: the start of a dropped row, which holds no newline.
        update(bytes, split, consumed)
      } else {
        // The commit point has not moved since `atCommit` was taken.
        update(bytes, 0, consumed)
      }
      fed += consumed
    },
    digest: (committed) => {
      if (fed === committed) return hash.digest('hex')
      if (atCommit === null || committed > fed) throw new Error('bug: the committed digest lost its place')
      return atCommit.digest('hex')
    },
    atPin: () => atPin,
  }
}
