import type { FastifyInstance } from 'fastify';

/**
 * The REST reference page at /docs, rendered from /openapi.json by a renderer bundled from npm (offline). Issue 18,
 * item 2: being built.
 */
export function registerApiReference(_app: FastifyInstance): void {
  // Filled in by the OpenAPI work of issue 18.
}
