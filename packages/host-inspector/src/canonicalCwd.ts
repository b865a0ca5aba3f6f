/**
 * The session folder as the filesystem sees it now: its canonical path and its identity. Two
 * spellings of one folder (a symlink, a trailing slash) must compare equal, and a folder removed
 * and recreated at the same path must not, so identity is the device and inode of the resolved
 * directory plus its canonical path.
 */
import { realpath, stat } from 'node:fs/promises'
import * as path from 'node:path'
import { pipe } from 'fp-ts/lib/function.js'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { cwdUnavailable, invalidCwd, notADirectory, type InspectError } from './InspectError.js'

// -------------------------------------------------------------------------------------
// model
// -------------------------------------------------------------------------------------

/**
 * The canonical path of a session folder and the identity of the directory found there.
 * @category models
 */
export interface WorkspaceObservation {
  readonly canonicalPath: string
  readonly identity: string
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

// realpath never ends in a separator except at a root, but a root must keep it ('/' is not '').
const withoutTrailingSeparator = (p: string): string => {
  const root = path.parse(p).root
  let end = p.length
  while (end > root.length && (p[end - 1] === path.sep || p[end - 1] === '/')) end -= 1
  return p.slice(0, end)
}

/**
 * The `realpath` of `cwd` without a trailing separator (a root such as `/` stays as it is).
 * @category constructors
 */
export const canonicalCwd = (cwd: string): TE.TaskEither<InspectError, string> =>
  // A relative path would resolve against this process's cwd, which says nothing about the session.
  typeof cwd !== 'string' || cwd.length === 0 || cwd.includes('\0') || !path.isAbsolute(cwd)
    ? TE.left(invalidCwd(cwd))
    : pipe(
        TE.tryCatch(
          () => realpath(cwd),
          (cause): InspectError => cwdUnavailable(cwd, cause),
        ),
        TE.map(withoutTrailingSeparator),
      )

/**
 * The canonical path of `cwd` and its identity `fs:<dev>:<ino>:<canonicalPath>`, from one `stat`.
 * @category constructors
 */
export const observeWorkspace = (cwd: string): TE.TaskEither<InspectError, WorkspaceObservation> =>
  pipe(
    canonicalCwd(cwd),
    TE.flatMap((canonicalPath) =>
      pipe(
        // bigint: inode numbers on some filesystems exceed 2^53 and would collide as doubles.
        TE.tryCatch(
          () => stat(canonicalPath, { bigint: true }),
          (cause): InspectError => cwdUnavailable(cwd, cause),
        ),
        TE.flatMap((st) =>
          st.isDirectory()
            ? TE.right({ canonicalPath, identity: `fs:${st.dev}:${st.ino}:${canonicalPath}` })
            : TE.left<InspectError>(notADirectory(cwd, canonicalPath)),
        ),
      ),
    ),
  )

/**
 * The workspace identity `fs:<dev>:<ino>:<canonicalPath>` of the directory `cwd` resolves to.
 * @category constructors
 */
export const workspaceIdentityOf = (cwd: string): TE.TaskEither<InspectError, string> =>
  pipe(
    observeWorkspace(cwd),
    TE.map((o) => o.identity),
  )
