/**
 * The spelling of a global id (docs/graphql-lists.md): base64url of `<Name>:<part>:<part>…`. Apart from node.ts so
 * that what only spells ids (tests, scripts) needs no GraphQL schema metadata.
 */

export function toNodeId(name: string, parts: readonly string[]): string {
  return Buffer.from([name, ...parts].join(':'), 'utf8').toString('base64url');
}

/** The name and key parts a global id spells; null for any text that is not exactly one of ours. */
export function partsOfNodeId(nodeId: string): { name: string; parts: string[] } | null {
  const [name, ...parts] = Buffer.from(nodeId, 'base64url').toString('utf8').split(':');
  if (name === undefined || name === '' || parts.some((part) => part === '')) return null;
  // One spelling per record: a lenient decoding of another text is not an id of ours.
  if (toNodeId(name, parts) !== nodeId) return null;
  return { name, parts };
}
