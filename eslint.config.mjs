// The linter of the repository (npm run lint, run by .ci/run with no warning allowed): ESLint's recommended rules
// and typescript-eslint's type-checked ones, over everything TypeScript compiles.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-dev/', 'node_modules/', 'coverage/', 'src/generated/', 'dashboard/src/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Interfaces we implement (Apollo plugins, Fastify hooks, MikroORM migrations) ask for functions returning a
      // promise; an `async` one without `await` is how they are written.
      '@typescript-eslint/require-await': 'off',
      // A query string in a URL template is what URLSearchParams's toString is for (Node declares the class itself, so
      // the rule's default allowance, for the lib's, misses it).
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allow: [{ name: ['Error', 'URL', 'URLSearchParams'], from: 'lib' }, { name: ['URLSearchParams', 'URL'], from: 'package', package: 'url' }] },
      ],
      // An iterator passes on the failure it caught (typed unknown) as it was; creating an Error is still required.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // A variable a handler reads before it is set (a signal during start-up) must stay `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests read the service's JSON answers as `any` on purpose and assert their shape with expect(); typing every
    // body would restate the schema in each test. Every other type-checked rule applies to them.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The few configuration files in plain JavaScript (CommonJS, run by Node).
    files: ['**/*.{js,cjs,mjs}'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { module: 'writable', require: 'readonly', process: 'readonly', __dirname: 'readonly' } },
  },
);
