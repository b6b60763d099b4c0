import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * Module boundaries make the intended graph the only possible one: `type:domain` code
 * (contracts, feed models) imports only other domain code, so no Nest, NATS or MongoDB
 * reaches it; data-access libs (log, stores, projections) build on the domain; util libs
 * (config, transport, Nest wiring) on both; a service's feature lib on all three; and an
 * app imports libraries only: it is a `main` that composes features.
 */
const layers = {
  'type:domain': ['type:domain'],
  'type:data-access': ['type:domain', 'type:data-access'],
  'type:util': ['type:domain', 'type:data-access', 'type:util'],
  'type:feature': ['type:domain', 'type:data-access', 'type:util'],
  'type:app': ['type:domain', 'type:data-access', 'type:util', 'type:feature'],
  // The HTTP API's client: the contracts' types over fetch, nothing of the server.
  'type:client': ['type:domain'],
  // Starting processes and servers, and calling them over HTTP: for tests and the benchmark.
  'type:harness': ['type:domain', 'type:data-access', 'type:util', 'type:client', 'type:harness'],
  'type:testing': ['type:domain', 'type:data-access', 'type:util', 'type:client', 'type:harness', 'type:testing'],
  'type:tool': ['type:domain', 'type:data-access', 'type:util', 'type:feature', 'type:client', 'type:harness'],
};

/** Only tests use the testing lib (reference models, shared scenarios) and, like the benchmark, the harness; any test may call the API with its client. */
const boundaries = (withTesting) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    banTransitiveDependencies: false,
    depConstraints: Object.entries(layers).map(([sourceTag, tags]) => ({
      sourceTag,
      onlyDependOnLibsWithTags: withTesting ? [...new Set([...tags, 'type:client', 'type:harness', 'type:testing'])] : tags,
    })),
  },
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.nx/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
  {
    // The web console's script runs in browsers, as it is written (no build step).
    files: ['libs/gateway-http/console/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'module' },
  },
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': boundaries(false),
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.spec.ts', 'libs/*/src/testing.ts', 'libs/*/src/contract/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(true) },
  },
  {
    // Data access (the log, the stores, projections) runs under any frame: Nest wires it, it does not know Nest.
    files: ['libs/event-log/src/**/*.ts', 'libs/stores/src/**/*.ts', 'libs/projections/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@nestjs/*'], message: 'data access stays free of the application frame' }] }],
    },
  },
  {
    // The domain may not import infrastructure packages at all.
    files: ['libs/contracts/src/**/*.ts', 'libs/feed-models/src/**/*.ts'],
    // Tests may read their fixtures from disk.
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@nestjs/*', '@nats-io/*', 'mongodb', '@kurrent/*', 'fastify', 'node:fs*', 'node:net'], message: 'the domain stays free of infrastructure' }] },
      ],
    },
  },
);
