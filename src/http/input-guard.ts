import type { FastifyRequest } from 'fastify';
import { describeInputProblem, findInputProblem } from '../shared/input-text';

/**
 * The input text rule (src/shared/input-text.ts) over what an HTTP request carries: path parameters, query
 * parameters and the JSON body, each named as the caller wrote it (`id`, `reference_id`, `params.summary`).
 * Header values need no check here: Node's parser already refuses NUL and other control characters in them.
 * Returns the message of the first problem, or undefined.
 */
export function guardRequestInput(request: FastifyRequest): string | undefined {
  for (const bag of [request.params, request.query]) {
    for (const [name, value] of Object.entries((bag ?? {}) as Record<string, unknown>)) {
      const problem = findInputProblem(value, name, 1);
      if (problem) return describeInputProblem(problem);
    }
  }
  const problem = findInputProblem(request.body, '');
  return problem ? describeInputProblem(problem) : undefined;
}
