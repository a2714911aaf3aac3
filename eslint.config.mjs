import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/**
 * Tests (`*.spec.ts`) may also use the testing lib; production code may not. `declared`: the
 * domain libs (by their `lib:` tag) a domain lib depends on on purpose (see DECLARED below).
 */
function boundaries(inTests, declared = []) {
  const extra = inTests ? ['type:testing'] : [];
  return {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: [
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:domain', 'type:infra', 'type:util', ...extra] },
      { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:infra', 'type:util', ...declared, ...extra] },
      { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:util', ...declared, ...extra] },
      { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', ...extra] },
      { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:domain', 'type:infra', 'type:util'] },
    ],
  };
}

/**
 * Lib-to-lib dependencies of the same layer, declared on purpose: admission composes budget's and
 * rate-limit's Lua and services, and appends usage to libs/usage's outbox in its completion script.
 */
const DECLARED = [
  { lib: 'admission', dependsOn: ['lib:budget', 'lib:rate-limit', 'lib:usage'] },
  // Disclosure's profiler is bound to the upstream registry's TOOL_PROFILER port once, for both apps.
  { lib: 'disclosure', dependsOn: ['lib:upstream-registry'] },
  // Reconciliation counts the usage still in the outbox (libs/usage owns its streams) as spent.
  { lib: 'reporting', dependsOn: ['lib:usage'] },
  // The authorization server issues tokens for keys of kind OAUTH, which identity owns.
  { lib: 'oauth-server', dependsOn: ['lib:identity'] },
  // Single sign-on finds or makes the person (and audits it) through identity.
  { lib: 'sso', dependsOn: ['lib:identity'] },
  // BullMQ runs on the Redis client libs/redis builds from the deployment's settings (cluster, TLS...).
  { lib: 'queue', dependsOn: ['lib:redis'] },
  // The audit trail's rows are written in the change's own Prisma transaction.
  { lib: 'audit', dependsOn: ['lib:db'] },
];

export default [
  { ignores: ['dist/**', 'node_modules/**', '.tollgate/**', '.nx/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      // The architecture, enforced: apps wire, domain libs hold the rules, infra and util libs
      // serve them. A domain lib may not import another domain lib.
      '@nx/enforce-module-boundaries': ['error', boundaries(false)],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration through @tollgate/config.' },
      ],
    },
  },
  {
    files: ['**/*.spec.ts'],
    rules: { '@nx/enforce-module-boundaries': ['error', boundaries(true)] },
  },
  ...DECLARED.flatMap(({ lib, dependsOn }) => [
    {
      files: [`libs/${lib}/**/*.ts`],
      rules: { '@nx/enforce-module-boundaries': ['error', boundaries(false, dependsOn)] },
    },
    {
      files: [`libs/${lib}/**/*.spec.ts`],
      rules: { '@nx/enforce-module-boundaries': ['error', boundaries(true, dependsOn)] },
    },
  ]),
  {
    // Entry points, tests, tools and benchmarks may read the environment; the config lib parses it.
    files: [
      'apps/*/src/main.ts',
      // Loaded first by main.ts: starts OpenTelemetry from the OTEL_* variables before the config is parsed.
      'apps/*/src/telemetry.ts',
      'libs/config/**',
      'libs/testing/**',
      'test/**',
      'tools/**',
      'bench/**',
      '**/*.spec.ts',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
];
