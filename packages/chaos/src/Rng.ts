/**
 * Seeds and the seeded generator of the chaos driver. Every choice an iteration makes (its script,
 * where each child is killed, how many resumers race) comes from its own 32-bit seed, and the seed of
 * iteration i + 1 is a fixed function of the seed of iteration i. So `--seed <seed of iteration i>
 * --iterations 1` replays iteration i alone, and `--seed S --iterations N` is the same run every time.
 */

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * A deterministic source of choices.
 * @category models
 */
export interface Rng {
  /** A float in [0, 1). */
  readonly next: () => number
  /** An integer in [min, max], both included. */
  readonly int: (min: number, max: number) => number
  /** One element of a non-empty list. */
  readonly pick: <A>(items: ReadonlyArray<A>) => A
  /** True with probability p. */
  readonly chance: (p: number) => boolean
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * mulberry32: tiny, fast and good enough to spread kills; not for anything secret.
 * @category constructors
 */
export const makeRng = (seed: number): Rng => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  return {
    next,
    int,
    pick: <A>(items: ReadonlyArray<A>): A => {
      const item = items[int(0, items.length - 1)]
      if (item === undefined) throw new Error('pick from an empty list')
      return item
    },
    chance: (p) => next() < p,
  }
}

/**
 * The seed of the iteration after the one with `seed` (a splitmix32-style finaliser, so nearby
 * seeds lead to unrelated iterations).
 * @category constructors
 */
export const nextSeed = (seed: number): number => {
  let z = (seed + 0x9e3779b9) >>> 0
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
  return (z ^ (z >>> 16)) >>> 0
}

/**
 * The seeds of `count` consecutive iterations starting with `seed`.
 * @category constructors
 */
export const iterationSeeds = (seed: number, count: number): ReadonlyArray<number> => {
  const seeds: Array<number> = []
  let current = seed >>> 0
  for (let i = 0; i < count; i += 1) {
    seeds.push(current)
    current = nextSeed(current)
  }
  return seeds
}

/**
 * Reads a seed as the user types it: a decimal or `0x` hex integer in [0, 2^32).
 * @category constructors
 */
export const parseSeed = (text: string): number | null => {
  const trimmed = text.trim()
  if (!/^(0x[0-9a-fA-F]{1,8}|[0-9]{1,10})$/.test(trimmed)) return null
  const value = Number(trimmed)
  return Number.isSafeInteger(value) && value >= 0 && value <= 0xffffffff ? value : null
}
