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
  testEnvironment: 'node',
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
