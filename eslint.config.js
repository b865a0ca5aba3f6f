// One flat config for the workspace: type-aware rules everywhere, and the purity fence around the core.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import { importX } from 'eslint-plugin-import-x'

const BRANDS = '/^(SessionId|RunId|ShellRunId|NonEmptyString|NonNegativeInt|FiniteNumber|IsoTimestamp|AbsolutePath)$/'
// The executor is a shell, but its deciders (decide*) and its revalidation are pure functions of what
// it read: they sit inside the fence so a read can never creep into a decision.
const pureCore = [
  'packages/events/src/**/*.ts',
  'packages/projection/src/**/*.ts',
  'packages/planner/src/**/*.ts',
  'packages/sessions/src/**/*.ts',
  'packages/executor/src/decide*.ts',
  'packages/executor/src/revalidate.ts',
  // The store contract: ports, errors, ledger-read types and row rules; the adapters do the I/O.
  'packages/stores/src/**/*.ts',
]

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.config.ts', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/array-type': ['error', { default: 'generic' }],
      '@typescript-eslint/prefer-readonly': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
    },
  },
  {
    // A brand is given by a codec (`X.is`, `X.decode`) or by a named `make…Unsafe` constructor of
    // @maka/events — never by an `as` cast, which would erase what was checked (decisions 60).
    ignores: ['packages/events/src/ids.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: `TSAsExpression > TSTypeReference[typeName.name=${BRANDS}]`,
          message: 'Brand with the codec or a make…Unsafe constructor of @maka/events, not a cast.',
        },
        {
          selector: `TSAsExpression > TSTypeReference[typeName.name=/^(Readonly)?Array$/] TSTypeReference[typeName.name=${BRANDS}]`,
          message: 'Brand with the codec or a make…Unsafe constructor of @maka/events, not a cast.',
        },
        {
          selector: 'TSAsExpression > TSIndexedAccessType',
          message: 'A cast to a field type is a brand cast: use the codec or a make…Unsafe constructor.',
        },
      ],
    },
  },
  {
    files: pureCore,
    ignores: ['**/*.test.ts', '**/test-support/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto'], message: 'The pure core does no I/O.' },
          ],
        },
      ],
      // The core may name a shell package's types, never load it. The store contract (`@maka/stores`)
      // is pure and inside the fence; its adapters are shell.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@maka/store-jsonl',
                '@maka/store-sqlite',
                '@maka/store-postgres',
                '@maka/host-inspector',
                '@maka/executor',
              ],
              allowTypeImports: true,
              message: 'The pure core imports the shell for types only.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'setTimeout', 'setInterval'],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Time reaches the core as data.' },
        { object: 'Math', property: 'random', message: 'Ids reach the core as data.' },
      ],
    },
  },
)
