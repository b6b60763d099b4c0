import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * Module boundaries keep the domain pure: `type:domain` code (contracts, feed models)
 * imports only other domain code, so no Nest, NATS or MongoDB reaches it; data-access
 * libs build on domain and util; only apps compose everything.
 */
const layers = {
  'type:domain': ['type:domain'],
  'type:data-access': ['type:domain', 'type:data-access'],
  'type:util': ['type:domain', 'type:data-access', 'type:util'],
  'type:app': ['type:domain', 'type:data-access', 'type:util', 'type:app'],
  'type:testing': ['type:domain', 'type:data-access', 'type:util', 'type:testing'],
  'type:tool': ['type:domain', 'type:data-access', 'type:util', 'type:app', 'type:testing', 'type:tool'],
};

/** Tests may also use the testing lib (nats-server launcher, clients, reference models). */
const boundaries = (withTesting) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    banTransitiveDependencies: false,
    depConstraints: Object.entries(layers).map(([sourceTag, tags]) => ({
      sourceTag,
      onlyDependOnLibsWithTags: withTesting ? [...tags, 'type:testing'] : tags,
    })),
  },
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.nx/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
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
