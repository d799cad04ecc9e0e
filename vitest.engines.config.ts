import { defineConfig } from 'vitest/config';

// The interop suite (npm run test:engines): real engines read tables floe wrote. Kept out of
// `npm test` because it needs `npm run engines:install` and minutes of engine start-up.
export default defineConfig({
  test: {
    include: ['test/engines/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts', 'test/engines/support/global-engines.ts'],
    pool: 'forks',
    // one file at a time: the engines are heavy (Spark, Trino) and the machine is shared
    fileParallelism: false,
    testTimeout: 900_000,
    hookTimeout: 600_000,
  },
});
