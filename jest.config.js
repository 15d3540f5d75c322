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
};
