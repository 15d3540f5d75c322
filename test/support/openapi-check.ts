import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * Every answer a test gets from a documented REST path is checked against the server's own /openapi.json: its
 * status must be one the document lists for that operation, and its body must match that status's schema. So
 * the published document cannot drift from what the routes answer, whichever test makes the request.
 */

interface DocumentedOperation {
  pattern: RegExp;
  method: string;
  label: string;
  responses: Map<string, ValidateFunction>;
}

type OpenApiDocument = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: { 'application/json'?: { schema: unknown } } }> }>>;
  components?: { schemas?: Record<string, unknown> };
};

function compile(document: OpenApiDocument): DocumentedOperation[] {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  ajv.addKeyword('example');
  addFormats(ajv);
  // The shared records and enums, under the id their references name (`#/components/schemas/Post`): resolvable from
  // every response's schema.
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) ajv.addSchema(schema as object, `#/components/schemas/${name}`);
  const operations: DocumentedOperation[] = [];
  for (const [template, methods] of Object.entries(document.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [method, operation] of Object.entries(methods)) {
      const responses = new Map<string, ValidateFunction>();
      for (const [status, response] of Object.entries(operation.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (schema) responses.set(status, ajv.compile(schema));
      }
      operations.push({ pattern, method: method.toUpperCase(), label: `${method.toUpperCase()} ${template}`, responses });
    }
  }
  return operations;
}

const documents = new Map<string, Promise<DocumentedOperation[] | undefined>>();

/** The compiled document of a server, fetched once per base URL; undefined where none is served (a simulator). */
function operationsOf(baseUrl: string): Promise<DocumentedOperation[] | undefined> {
  let operations = documents.get(baseUrl);
  if (!operations) {
    operations = fetch(`${baseUrl}/openapi.json`)
      .then(async (response) => (response.ok ? compile((await response.json()) as OpenApiDocument) : undefined))
      .catch(() => undefined);
    documents.set(baseUrl, operations);
    // A server that could not answer (stopping, or none) is asked again next time.
    void operations.then((found) => found ?? documents.delete(baseUrl));
  }
  return operations;
}

/** Throws when a documented operation answered a status or a body its OpenAPI document does not describe. */
export async function checkAgainstOpenApi(baseUrl: string, method: string, path: string, status: number, body: unknown): Promise<void> {
  const pathname = path.split('?')[0]!;
  const operations = await operationsOf(baseUrl);
  const operation = operations?.find((candidate) => candidate.method === method.toUpperCase() && candidate.pattern.test(pathname));
  if (!operation) return;
  const validate = operation.responses.get(String(status));
  if (!validate) {
    throw new Error(`${operation.label} answered ${status}, a status its OpenAPI document does not list: ${JSON.stringify(body)}`);
  }
  if (!validate(body)) {
    const problems = (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`).join('; ');
    throw new Error(`${operation.label} answered ${status} with a body its OpenAPI schema refuses (${problems}): ${JSON.stringify(body).slice(0, 2000)}`);
  }
}
