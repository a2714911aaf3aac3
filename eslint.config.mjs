import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

export default [
  { ignores: ['dist/**', 'node_modules/**', '.tollgate/**', '.nx/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      // The architecture, enforced: apps wire, domain libs hold the rules, infra and util libs
      // serve them. A domain lib may not import another domain lib.
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:domain', 'type:infra', 'type:util'] },
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:infra', 'type:util'] },
            { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:util'] },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:domain', 'type:infra', 'type:util'] },
          ],
        },
      ],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through @tollgate/config.' }],
    },
  },
  {
    // Entry points, tests, tools and benchmarks may read the environment; the config lib parses it.
    files: ['apps/*/src/main.ts', 'libs/config/**', 'libs/testing/**', 'test/**', 'tools/**', 'bench/**', '**/*.spec.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
];
