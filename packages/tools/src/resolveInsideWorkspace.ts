/**
 * Workspace confinement. Every path a tool touches is first resolved the way the kernel would —
 * following each symlink that exists, including dangling ones, which `realpath` cannot follow — and
 * is refused unless the result lies inside `realpath(cwd)`. Tools then operate on the resolved path,
 * never on the string the model sent, so what was checked is what gets touched.
 */
import { lstat, readlink, realpath } from 'node:fs/promises'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { errorCode, fileSystemFailed, outsideWorkspace, workspaceUnavailable, type ToolFailure } from './ToolFailure.js'

// Linux gives up after 40 links (MAXSYMLINKS); a cycle must end the walk the same way.
const MAX_SYMLINK_HOPS = 40

class SymlinkLoop extends Error {
  readonly code = 'ELOOP'
}

const components = (p: string): Array<string> => p.split(path.sep).filter((c) => c !== '' && c !== '.')

/**
 * Resolves an absolute, possibly partly missing path one component at a time. `current` is always
 * canonical, so a `..` that a link target brings in is applied to the real parent, as the kernel does.
 */
const canonicalize = async (absolute: string): Promise<string> => {
  try {
    return await realpath(absolute)
  } catch (cause) {
    // Only a missing part (or a dangling link) needs the walk; anything else is a real failure.
    if (errorCode(cause) !== 'ENOENT') throw cause
  }
  const root = path.parse(absolute).root
  let current = root
  let hops = 0
  let missing = false
  const pending = components(absolute)
  while (pending.length > 0) {
    const next = pending.shift() as string
    if (next === '..') {
      current = path.dirname(current)
      continue
    }
    const candidate = path.join(current, next)
    if (missing) {
      current = candidate
      continue
    }
    let isLink = false
    try {
      isLink = (await lstat(candidate)).isSymbolicLink()
    } catch (cause) {
      if (errorCode(cause) !== 'ENOENT') throw cause
      // Nothing below a missing entry can be a link, so the rest is appended as written.
      missing = true
    }
    if (!isLink) {
      current = candidate
      continue
    }
    hops += 1
    if (hops > MAX_SYMLINK_HOPS) throw new SymlinkLoop('symlink loop')
    const target = await readlink(candidate)
    if (path.isAbsolute(target)) current = path.parse(target).root
    pending.unshift(...components(target))
  }
  return current
}

const isInside = (root: string, candidate: string): boolean => {
  const relative = path.relative(root, candidate)
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
}

/**
 * Resolves `requested` (relative to `cwd`, or absolute) following symlinks, and returns it only when
 * it stays inside `realpath(cwd)`.
 * @category constructors
 */
export const resolveInsideWorkspace = async (
  cwd: string,
  requested: string,
): Promise<E.Either<ToolFailure, string>> => {
  let root: string
  try {
    root = await realpath(cwd)
  } catch (cause) {
    return E.left(workspaceUnavailable(cwd, cause))
  }
  let resolved: string
  try {
    // Joined, not `path.resolve`d: lexical `..` folding would skip the link before it, unlike the kernel.
    resolved = await canonicalize(path.isAbsolute(requested) ? requested : `${root}${path.sep}${requested}`)
  } catch (cause) {
    return E.left(fileSystemFailed('resolve', requested, cause))
  }
  return isInside(root, resolved) ? E.right(resolved) : E.left(outsideWorkspace(requested))
}

/**
 * The path as the model should see it: relative to the workspace root, `.` for the root itself.
 * @category constructors
 */
export const workspaceRelative = async (cwd: string, resolved: string): Promise<string> => {
  const relative = path.relative(await realpath(cwd), resolved)
  return relative === '' ? '.' : relative
}
