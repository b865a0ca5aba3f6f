import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Workspace packages resolve to their TypeScript sources (the `@maka/source` export condition), so
  // these tests run on a fresh clone without building the packages they import (docs/releasing.md).
  ssr: { resolve: { conditions: ['@maka/source', 'module', 'node', 'development|production'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 120_000,
    // Some tests run the built output under plain node: build it (and its references) first.
    globalSetup: ['../../scripts/build-before-tests.mjs'],
  },
})
