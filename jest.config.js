// Three tiers, chosen by file suffix: unit (no I/O), int (one process, real in-process
// adapters, real nats-server), e2e (real processes over HTTP). Each is its own Jest project.
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      keepClassNames: true,
    },
    module: { type: 'es6' },
  },
];

const shared = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@feedmill/([a-z-]+)/testing$': '<rootDir>/libs/$1/src/testing.ts',
    // Apps import libraries only, so every @feedmill package a test imports is a library.
    '^@feedmill/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/'],
};

export default {
  // A global option (per-project values are ignored): e2e tests start processes and wait on them.
  testTimeout: 120_000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.unit.spec.ts', '<rootDir>/deploy/test/*.unit.spec.ts'] },
    { ...shared, displayName: 'int', testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.int.spec.ts'] },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.e2e.spec.ts'] },
  ],
};
