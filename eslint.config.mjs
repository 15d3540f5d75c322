// The linter of the repository (npm run lint, run by .ci/run with no warning allowed): ESLint's recommended rules
// and typescript-eslint's type-checked ones, over everything TypeScript compiles.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-dev/', 'node_modules/', 'coverage/', 'src/generated/'] },
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
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests read the service's JSON answers as `any` on purpose and assert their shape with expect(); typing every
    // body would restate the schema in each test. Every other type-checked rule applies to them.
    files: ['test/**/*.ts'],
    rules: {
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
