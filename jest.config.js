/** Integration tests against a real PostgreSQL (embedded, or DATABASE_URL) through the public surface. */
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

module.exports = {
  // Node, plus a check that each test file leaves nothing running (test/support/leak-checking-environment.ts).
  testEnvironment: '<rootDir>/test/support/leak-checking-environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // test/redis needs a Redis: it runs only when REDIS_URL is set (.ci/run sets it when one answers locally).
  testPathIgnorePatterns: ['/node_modules/', ...(process.env.REDIS_URL ? [] : ['<rootDir>/test/redis/'])],
  transform: { '^.+\\.ts$': ['@swc/jest', swcConfig] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
  // Two cores here: more workers only contend for them (and for PostgreSQL).
  maxWorkers: 2,
  // A worker that was told to end gets this long before it is killed as "failed to exit gracefully". Every file is
  // already checked to leave nothing running (the environment above); the default 500 ms is shorter than a busy
  // 2-core machine may take to schedule the worker at all, and a real leak still shows after 5 s.
  workerGracefulExitTimeout: 5000,
};
