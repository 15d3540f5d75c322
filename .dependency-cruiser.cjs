/** The import rules of the repository (npm run depcheck, run by .ci/run). Type-only imports count. */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Modules import in one direction only; a cycle, type-only imports included, ties its modules into one.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'product-stands-alone',
      comment: 'The product (src/) never imports the provider simulators, the development entry, benchmarks, tests or the dashboard\'s sources (it serves their bundle).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(sandboxes|dev|bench|test|dashboard)/' },
    },
    {
      name: 'dashboard-stands-alone',
      comment: 'The dashboard runs in a browser, bundled on its own: it speaks to the service through its API only.',
      severity: 'error',
      from: { path: '^dashboard/' },
      to: { path: '^(src|sandboxes|dev|bench|test|migrations)/' },
    },
    {
      name: 'sandboxes-take-only-wire-types',
      comment: 'The simulators take from the product only the providers\' wire types.',
      severity: 'error',
      from: { path: '^sandboxes/' },
      to: { path: '^src/', pathNot: '^src/providers/(alpha/alpha|beta/beta)\\.types\\.ts$' },
    },
    {
      name: 'machinery-knows-modules-not-resources',
      comment:
        'The machinery is written against modules (src/resource-module.ts) and imports no resource folder, type imports included: a resource registers itself through its module, listed once in src/modules.ts.',
      severity: 'error',
      from: { path: '^src/((db|jobs|events|async-work|activity|graphql)/|rest/(?!routes/)|request-scope\\.ts$|resource-module\\.ts$|compose-modules\\.ts$)' },
      to: { path: '^src/(organization|account|account-import|location|post|review|citation|beta-brand|competitor-scan|oauth|auth|webhook|billing|activity-log|demo)/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|dist-dev|node_modules)/' },
    // Packages' "exports" maps, as Node and TypeScript (moduleResolution nodenext) read them.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['types', 'require', 'node', 'import', 'default'], mainFields: ['types', 'typings', 'main'] },
  },
};
