/**
 * In-process serialization of every write to one run (docs/contract.md §1: "All writes to one run are
 * serialized in-process"). The queue is keyed by the run's absolute directory and shared by every
 * store instance of the process, so two `makeFileStores` over the same data dir cannot interleave
 * an append with a truncation or a header write.
 */

const tails = new Map<string, Promise<void>>()

/**
 * Runs `task` after every task queued earlier under `key` has settled.
 * @category constructors
 */
export const serialized = <A>(key: string, task: () => Promise<A>): Promise<A> => {
  const previous = tails.get(key) ?? Promise.resolve()
  const result = previous.then(task)
  const tail = result.then(
    () => undefined,
    () => undefined,
  )
  tails.set(key, tail)
  // Forget idle runs so a long-lived process does not keep one entry per run it ever touched.
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key)
  })
  return result
}
