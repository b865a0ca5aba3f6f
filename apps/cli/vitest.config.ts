import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The CLI tests mostly wait on child processes and tmux, so files overlap even on 2 cores.
    maxWorkers: 3,
    // One scratch PostgreSQL cluster for the PostgreSQL store tests (`inject('postgresUrl')`),
    // stopped and removed when the run ends, whatever its outcome.
    globalSetup: ['../../scripts/scratch-postgres.mjs'],
  },
})
