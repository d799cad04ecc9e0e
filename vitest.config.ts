import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/engines needs the engines installed: `npm run test:engines` (vitest.engines.config.ts)
    exclude: [...configDefaults.exclude, 'test/engines/**'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Tests run with a non-UTC zone on purpose (package.json sets TZ=Asia/Seoul): values must not
    // depend on the process time zone.
  },
});
