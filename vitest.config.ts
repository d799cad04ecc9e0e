import { availableParallelism } from 'node:os';
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
      // `npm run test:unit`: Node alone (test/unit-tests.ts). Its files share nothing, so they run on
      // every core (vitest's default leaves one to itself: on 2 cores, one file at a time), first;
      // the files with servers and processes then run one at a time (their own group).
      { extends: true, test: { name: 'unit', include: [...UNIT_TESTS], exclude: notHere, maxWorkers: Math.max(2, availableParallelism() - 1), sequence: { groupOrder: 0 } } },
      // `npm run test:integration`: real servers and processes, one shared MariaDB (global setup)
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...notHere, ...UNIT_TESTS, ...MYSQL8_ONLY_SUITES], globalSetup: ['test/support/global-setup.ts'], sequence: { groupOrder: 1 } },
      },
      // `npm run test:mysql8`: the suites of test/mysql8-suites.ts again, against Oracle MySQL 8
      {
        extends: true,
        test: { name: 'mysql8', include: [...MYSQL8_SUITES, ...MYSQL8_ONLY_SUITES], exclude: notHere, globalSetup: ['test/support/global-setup.ts'], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
