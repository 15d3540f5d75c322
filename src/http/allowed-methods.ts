/**
 * The methods each registered path answers, so a known path asked with another method gets 405 with `Allow`
 * (not a 404 that suggests the path does not exist). Fed by Fastify's onRoute hook.
 */
export class AllowedMethods {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];

  add(url: string, method: string | string[]): void {
    // Fastify path syntax: `:name` is one segment, `*` the rest of the path.
    const source = url
      .split(/(:[A-Za-z0-9_]+|\*)/)
      .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    const pattern = new RegExp(`^${source}$`);
    let route = this.routes.find((candidate) => candidate.pattern.source === pattern.source);
    if (!route) this.routes.push((route = { pattern, methods: new Set() }));
    for (const m of Array.isArray(method) ? method : [method]) route.methods.add(m.toUpperCase());
  }

  /** Methods that `pathname` answers; empty when no route has that path at all. */
  for(pathname: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes) if (route.pattern.test(pathname)) route.methods.forEach((m) => methods.add(m));
    return [...methods].sort();
  }
}
