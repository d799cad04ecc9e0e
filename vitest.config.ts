import { configDefaults, defineConfig } from 'vitest/config';
import { UNIT_TESTS } from './test/unit-tests.js';
import { MYSQL8_ONLY_SUITES, MYSQL8_SUITES } from './test/mysql8-suites.js';

// test/engines needs the engines installed: `npm run test:engines` (vitest.engines.config.ts)
const notHere = [...configDefaults.exclude, 'test/engines/**'];

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Tests run with a non-UTC zone on purpose (package.json sets TZ=Asia/Seoul): values must not
    // depend on the process time zone.
    projects: [
      // `npm run test:unit`: Node alone (test/unit-tests.ts)
      { extends: true, test: { name: 'unit', include: [...UNIT_TESTS], exclude: notHere } },
      // `npm run test:integration`: real servers and processes, one shared MariaDB (global setup)
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...notHere, ...UNIT_TESTS, ...MYSQL8_ONLY_SUITES], globalSetup: ['test/support/global-setup.ts'] },
      },
      // `npm run test:mysql8`: the suites of test/mysql8-suites.ts again, against Oracle MySQL 8
      {
        extends: true,
        test: { name: 'mysql8', include: [...MYSQL8_SUITES, ...MYSQL8_ONLY_SUITES], exclude: notHere, globalSetup: ['test/support/global-setup.ts'] },
      },
    ],
  },
});
