import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Workspace packages resolve to their TypeScript sources (the `@maka/source` export condition), so
  // these tests run on a fresh clone without building the packages they import (docs/releasing.md).
  ssr: { resolve: { conditions: ['@maka/source', 'module', 'node', 'development|production'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Child processes run the built output under plain node: build it first. Then one scratch
    // PostgreSQL cluster for the whole run (its URL is `inject('postgresUrl')`), stopped at the end.
    globalSetup: ['../../scripts/build-before-tests.mjs', '../../scripts/scratch-postgres.mjs'],
  },
})
