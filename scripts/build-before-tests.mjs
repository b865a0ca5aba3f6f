// vitest globalSetup of the packages whose tests run their built output under plain node (child
// processes, dist smoke tests): `tsc -b` brings that package's dist/ and its references' up to
// date first, so `pnpm --filter <pkg> test` works on a fresh clone. After a turbo build it is an
// up-to-date check that writes nothing.
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'

export const setup = (project) => {
  const root = project?.config?.root ?? process.cwd()
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
}
