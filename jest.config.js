/**
 * Two projects: `unit` runs the pure rules and computations on their own (no database, no build: seconds);
 * `integration` runs everything else against a real PostgreSQL (embedded, or DATABASE_URL) through the public
 * surface. `npm test` runs both; `npm run test:unit` only the first.
 */
const swcConfig = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

const transform = { '^.+\\.ts$': ['@swc/jest', swcConfig] };

const unit = {
  displayName: 'unit',
  rootDir: __dirname,
  testEnvironment: 'node',
  roots: ['<rootDir>/test/unit'],
  testMatch: ['**/*.unit.test.ts'],
  transform,
};

const integration = {
  displayName: 'integration',
  rootDir: __dirname,
  // Node, plus a check that each test file leaves nothing running (test/support/leak-checking-environment.ts).
  testEnvironment: '<rootDir>/test/support/leak-checking-environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // test/unit is the other project's. test/redis needs a Redis: it runs only when REDIS_URL is set (.ci/run sets it
  // when one answers locally).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/unit/', ...(process.env.REDIS_URL ? [] : ['<rootDir>/test/redis/'])],
  transform,
  // A project's global setup runs only when one of its files is selected: the unit tier builds nothing.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

module.exports = {
  projects: [unit, integration],
  // The options below are Jest's global ones: inside a project it ignores maxWorkers and workerGracefulExitTimeout,
  // and jest-circus reads the global testTimeout only. They apply to both projects.
  testTimeout: 60000,
  // Two cores here: more workers only contend for them (and for PostgreSQL).
  maxWorkers: 2,
  // A worker that was told to end gets this long before it is killed as "failed to exit gracefully". Every file is
  // already checked to leave nothing running (the environment above); the default 500 ms is shorter than a busy
  // 2-core machine may take to schedule the worker at all, and a real leak still shows after 5 s.
  workerGracefulExitTimeout: 5000,
};
