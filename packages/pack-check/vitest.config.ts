import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Both files drive pnpm, npm and tsc in child processes over whole packages.
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
})
