// ESLint flat config: typescript-eslint with type information for the product code; tests and
// benchmarks get the same rules minus those about `any` that test fixtures need.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.scratch/', 'fixtures/', 'schemas/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Implementations of async interfaces (the memory stores) answer at once: an async method
      // without await is how they keep the interface's promise contract.
      '@typescript-eslint/require-await': 'off',
      'no-console': 'error',
      eqeqeq: ['error', 'smart'],
      // chevrotain's values come from compiler/chevrotain.ts (its fast single-file build, one copy).
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'chevrotain',
              message: 'import chevrotain values from compiler/chevrotain.ts',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  { files: ['compiler/chevrotain.ts'], rules: { '@typescript-eslint/no-restricted-imports': 'off' } },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // tap runs the subtests a test starts; their promises are its business.
      '@typescript-eslint/no-floating-promises': 'off',
      'no-console': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Tests print values into messages, pass methods to t.throws, and reject with what a callback gave.
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
    },
  },
  { files: ['**/*.js', '**/*.cjs', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  // The web build script runs on node.
  { files: ['scripts/**/*.mjs'], languageOptions: { globals: { process: 'readonly' } } },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
