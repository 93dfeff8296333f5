/**
 * Import rules checked by `npm run lint` (dependency-cruiser): no import cycles anywhere, and the database layer
 * (src/db/: connection, schema, migrations, repositories) imports nothing from the feature folders built on it; it
 * may read the configuration (src/config/), which sits below everything. The server takes undici part by part.
 * Type-only imports count: a cycle through types is still two modules that cannot be read one without the other.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles make modules impossible to read, test or load one without the other.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'db-imports-no-feature',
      severity: 'error',
      comment:
        'src/db/ is the layer features are built on; it must not reach back into them (package-files.ts is a leaf: the version that wrote a database).',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: ['^src/(db|config)/', '^src/package-files[.]ts$'] },
    },
    {
      name: 'undici-part-by-part',
      severity: 'error',
      comment:
        "undici's index loads all of undici (fetch, WebSocket, mocks...) and it stays resident: the server takes the parts it uses from src/upstream/undici-parts.ts (docs/performance.md, Memory).",
      from: { path: '^src/' },
      to: { path: '(^|/)node_modules/undici/index\\.js$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
