import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // A native addon's build output, and its two-line declaration file (checked by the TypeScript
  // code that imports it).
  { ignores: ['dist/**', 'node_modules/**', 'demo/sample-repo/**', 'coverage/**', 'native/*/build/**', 'native/*/index.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Type-aware rules: a promise nobody awaits or handles is how failures get lost (a rejected
    // one stops the server). `void` does not count as handling it.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // The web UI's service worker is plain JavaScript run by the browser.
    files: ['src/www/public/sw.js'],
    languageOptions: { globals: { self: 'readonly', caches: 'readonly', fetch: 'readonly', location: 'readonly', URL: 'readonly', Response: 'readonly' } },
  },
  {
    // The web UI's sign-in page script runs in the browser.
    files: ['src/server/web/**/*.js'],
    languageOptions: { globals: { document: 'readonly', location: 'readonly', history: 'readonly', fetch: 'readonly', URLSearchParams: 'readonly' } },
  },
  {
    // A native addon's CommonJS entry point: Node.js loads `.node` files only through `require`.
    files: ['native/*/index.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['bin/**', 'scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
