/**
 * A ledger's committed prefix read as plain JSON, with no codec of the product: every byte up to and
 * including the last newline, split into rows. A row that does not parse is left out of the rows the
 * checker reasons about; `unparsableLines` only counts where such rows are, so that a phase which
 * leaves one behind can be told apart from a ledger that was never whole.
 */

/**
 * A JSON object as read from disk.
 * @category models
 */
export type JsonObject = Readonly<Record<string, unknown>>

/**
 * The value if it is a JSON object, else null.
 * @category constructors
 */
export const asObject = (value: unknown): JsonObject | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : null

/**
 * A whole file parsed as one JSON object, or null when it is missing or is not one.
 * @category constructors
 */
export const parseObject = (bytes: Buffer | null): JsonObject | null => {
  if (bytes === null) return null
  try {
    return asObject(JSON.parse(bytes.toString('utf8')))
  } catch {
    return null
  }
}

/**
 * The committed prefix: every byte up to and including the last newline.
 * @category constructors
 */
export const committedPrefix = (ledger: Buffer | null): Buffer => {
  if (ledger === null) return Buffer.alloc(0)
  const end = ledger.lastIndexOf(0x0a)
  return end < 0 ? Buffer.alloc(0) : ledger.subarray(0, end + 1)
}

/**
 * The committed rows that parse as JSON objects, in ledger order.
 * @category constructors
 */
export const committedRows = (ledger: Buffer | null): ReadonlyArray<JsonObject> =>
  committedPrefix(ledger)
    .toString('utf8')
    .split('\n')
    .flatMap((line) => {
      if (line === '') return []
      try {
        const row = asObject(JSON.parse(line))
        return row === null ? [] : [row]
      } catch {
        return []
      }
    })

/**
 * The 1-based line numbers of committed lines that are not a JSON object (an empty line included):
 * the rows a reader of the ledger would stop at.
 * @category constructors
 */
export const unparsableLines = (ledger: Buffer | null): ReadonlyArray<number> => {
  const lines = committedPrefix(ledger).toString('utf8').split('\n')
  // The prefix ends with its newline, so the last piece of the split is always empty.
  lines.pop()
  return lines.flatMap((line, i) => {
    try {
      return asObject(JSON.parse(line)) === null ? [i + 1] : []
    } catch {
      return [i + 1]
    }
  })
}
