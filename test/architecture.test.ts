import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The shape of src/ that the services rely on, checked on the code itself: services and the rest of the domain
 * know nothing of the transports, and folders depend on each other in one direction only.
 */
const SRC = path.resolve(__dirname, '../src');

/**
 * Folders that are transports (or generated for them): GraphQL, REST, the HTTP edge, the front door, the IDE, the dashboard, the REST
 * reference page, the simulators, the CLI.
 */
const TRANSPORTS = new Set(['graphql', 'rest', 'http', 'home', 'ide', 'dashboard', 'docs', 'sandbox', 'cli', 'generated']);

/** Files of a resource folder that are GraphQL's by role: resolvers, their inputs, and the GraphQL types. */
const GRAPHQL_ROLE = /\.(resolver|inputs|types)\.ts$|\.enums\.ts$/;

interface SourceImport {
  file: string;
  target: string;
  /** Erased at run time (`import type`, or only `type` names): no dependency at run time. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : name.endsWith('.ts') ? [full] : [];
  });
}

function importsOf(file: string): SourceImport[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: SourceImport[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
    let typeOnly = false;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      typeOnly = Boolean(clause?.isTypeOnly || (clause && !clause.name && named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else {
      typeOnly = statement.isTypeOnly;
    }
    found.push({ file, target: path.resolve(path.dirname(file), specifier.text), typeOnly });
  }
  return found;
}

/** A folder directly under src/, or a top-level file by its own name (top-level files are not a folder). */
function nodeOf(file: string): string {
  const relative = path.relative(SRC, file);
  return relative.includes(path.sep) ? relative.split(path.sep)[0]! : relative.replace(/\.ts$/, '.ts');
}

const files = sourceFiles(SRC);
const imports = files.flatMap(importsOf).filter((entry) => entry.target.startsWith(SRC));

/** The machinery's own modules: folders every resource may use, which register like the resources do. */
const MACHINERY_MODULES = new Set(['async-work', 'limits']);
/** Resource folders: those that declare a module (src/modules.ts lists them), apart from the machinery's. */
const RESOURCES = files
  .filter((file) => file.endsWith('.module.ts'))
  .map(nodeOf)
  .filter((folder) => !MACHINERY_MODULES.has(folder));
/** The queues a resource declares (`defineQueue({ name: … })` in its folder). */
const queuesOf = (resource: string) =>
  files.filter((file) => nodeOf(file) === resource).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/defineQueue\(\{\s*name: '([^']+)'/g)].map((match) => match[1]!));

describe('the shape of src/', () => {
  it('keeps the domain free of the transports: no import of graphql/, rest/ or http/ outside GraphQL-role files', () => {
    const offending = imports
      .filter((entry) => {
        const from = nodeOf(entry.file);
        return !from.endsWith('.ts') && !TRANSPORTS.has(from) && !GRAPHQL_ROLE.test(entry.file) && TRANSPORTS.has(nodeOf(`${entry.target}.ts`));
      })
      .map((entry) => `${path.relative(SRC, entry.file)} -> ${path.relative(SRC, entry.target)}`);
    expect(offending).toEqual([]);
  });

  it('registers each resource in at most two files of the machinery: the module list and one more', () => {
    // Outside the resource folders, the demo, and the REST route files and operation documents (each resource's own).
    const machinery = [...files, ...sourceFiles(path.resolve(__dirname, '../dashboard/src'))].filter(
      (file) => !RESOURCES.includes(nodeOf(file)) && !/^(demo|generated)$/.test(nodeOf(file)) && !path.relative(SRC, file).startsWith(path.join('rest', 'routes')),
    );
    expect(RESOURCES).toEqual(expect.arrayContaining(['post', 'location', 'review', 'webhook', 'beta-brand', 'competitor-scan', 'account-import', 'citation']));
    const registeredIn = Object.fromEntries(
      RESOURCES.map((resource) => {
        const queues = queuesOf(resource);
        const naming = machinery.filter((file) => {
          const text = readFileSync(file, 'utf8');
          const importsIt = imports.some((entry) => entry.file === file && nodeOf(`${entry.target}.ts`) === resource);
          return importsIt || queues.some((queue) => text.includes(`'${queue}'`));
        });
        return [resource, naming.map((file) => path.relative(SRC, file))];
      }),
    );
    const over = Object.entries(registeredIn).filter(([, naming]) => naming.length > 2);
    expect(over).toEqual([]);
    expect(registeredIn.post).toEqual(['modules.ts']);
  });

  it('lets no service write response headers: only transports and resolvers touch them', () => {
    const writers = files
      .filter((file) => !TRANSPORTS.has(nodeOf(file)) && !nodeOf(file).endsWith('.ts') && !GRAPHQL_ROLE.test(file))
      .filter((file) => /responseHeaders|reply\.header|\.headers\.set\(/.test(readFileSync(file, 'utf8')))
      .map((file) => path.relative(SRC, file));
    expect(writers).toEqual([]);
  });

  it('has no import cycles between folders (at run time)', () => {
    const edges = new Map<string, Set<string>>();
    for (const entry of imports.filter((e) => !e.typeOnly)) {
      const from = nodeOf(entry.file);
      const to = nodeOf(`${entry.target}.ts`);
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
    }
    const reaches = (start: string, goal: string): boolean => {
      const seen = new Set<string>();
      const stack = [start];
      while (stack.length > 0) {
        const node = stack.pop()!;
        if (node === goal) return true;
        if (seen.has(node)) continue;
        seen.add(node);
        stack.push(...(edges.get(node) ?? []));
      }
      return false;
    };
    const cycles = [...edges].flatMap(([from, targets]) => [...targets].filter((to) => reaches(to, from)).map((to) => `${from} -> ${to}`));
    expect(cycles).toEqual([]);
    // The graph is not trivially empty: the check sees the real dependencies.
    expect(edges.get('post')).toEqual(expect.objectContaining({ size: expect.any(Number) }));
    expect([...(edges.get('post') ?? [])]).toEqual(expect.arrayContaining(['account', 'location', 'errors']));
  });
});
