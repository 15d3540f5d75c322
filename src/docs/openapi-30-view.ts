/**
 * The reference page's copy of /openapi.json, in OpenAPI 3.0 form. Swagger UI reads a 3.1 document through
 * ApiDOM, which refracts and normalizes the whole document before it draws anything: about 5 s of CPU for ours,
 * where its 3.0 path draws the same in under 1 (docs/openapi.md, "The reference page"). The document itself stays
 * 3.1; this copy only says the same in 3.0's words, for that one reader.
 *
 * Only exact translations, of what the document uses:
 * - `type: [T, 'null']` -> `type: T, nullable: true`;
 * - `anyOf`/`oneOf` of one schema and `{type: 'null'}` -> `allOf: [that schema], nullable: true`;
 * - `const: v` -> `enum: [v]`;
 * - a schema's `examples: [a, …]` -> `example: a`.
 * Anything else of 3.1 that 3.0 cannot say (another type list, `prefixItems`, a `$ref` with siblings, `webhooks`, …)
 * makes the whole translation give up (undefined): the page then shows the 3.1 document, slower but right.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Keys whose value is a map of names (of properties, paths, media types, …), not keywords. */
const NAME_MAPS = new Set(['properties', 'patternProperties', 'schemas', 'paths', 'responses', 'content', 'headers', 'parameters', 'callbacks', 'securitySchemes', 'requestBodies', 'links', 'encoding', 'variables']);

/** Keywords 3.0 does not have, at any place. */
const ONLY_31 = new Set(['prefixItems', '$defs', '$schema', '$id', '$anchor', '$dynamicRef', '$dynamicAnchor', 'if', 'then', 'else', 'dependentSchemas', 'dependentRequired', 'unevaluatedItems', 'unevaluatedProperties', 'contentMediaType', 'contentEncoding', 'contentSchema', 'propertyNames', 'webhooks', 'jsonSchemaDialect', 'pathItems']);

/** Keys whose value is data (an example, a default, the allowed values), never a schema. */
const DATA = new Set(['example', 'enum', 'default']);

class Untranslatable extends Error {}

const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNullSchema = (value: Json): boolean => isObject(value) && value.type === 'null' && Object.keys(value).length === 1;

/** One object's own 3.1 keywords in 3.0's words (its children are translated by the caller). */
function translateKeywords(node: JsonObject): JsonObject {
  const out: JsonObject = { ...node };
  for (const key of Object.keys(node)) if (ONLY_31.has(key)) throw new Untranslatable(key);
  if (typeof node.$ref === 'string' && Object.keys(node).length > 1) throw new Untranslatable('$ref with siblings');
  if (typeof node.exclusiveMinimum === 'number' || typeof node.exclusiveMaximum === 'number') throw new Untranslatable('numeric exclusive bounds');
  if (Array.isArray(node.type)) {
    const types = node.type.filter((type) => type !== 'null');
    if (types.length !== 1 || node.type.length !== 2) throw new Untranslatable(`type ${JSON.stringify(node.type)}`);
    out.type = types[0]!;
    out.nullable = true;
  } else if (node.type === 'null') {
    // Alone, outside the anyOf pair below: 3.0 has no type for "only null".
    throw new Untranslatable('type null');
  }
  for (const combiner of ['anyOf', 'oneOf'] as const) {
    const options = node[combiner];
    if (!Array.isArray(options) || !options.some(isNullSchema)) continue;
    const others = options.filter((option) => !isNullSchema(option));
    if (others.length !== 1 || options.length !== 2) throw new Untranslatable(`${combiner} with null`);
    delete out[combiner];
    out.allOf = others;
    out.nullable = true;
  }
  if ('const' in node) {
    out.enum = [node.const!];
    delete out.const;
  }
  // A schema's examples are a list (3.1); a parameter's or a media type's are a map of Example Objects (both).
  if (Array.isArray(node.examples)) {
    if (node.examples.length > 0) out.example = node.examples[0]!;
    delete out.examples;
  }
  return out;
}

function translate(node: Json, namesHere = false): Json {
  if (Array.isArray(node)) return node.map((item) => translate(item));
  if (!isObject(node)) return node;
  const own = namesHere ? node : translateKeywords(node);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(own)) {
    // Data, not schema (examples, a map of Example Objects, included; and extensions): copied as they are.
    if (DATA.has(key) || key.startsWith('x-') || (key === 'examples' && isObject(value))) out[key] = value;
    else if (NAME_MAPS.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, translate(item, key === 'callbacks')]));
    else out[key] = translate(value);
  }
  return out;
}

/** The document in OpenAPI 3.0 form, or undefined when it says something 3.0 cannot. */
export function openApi30View(document: Record<string, unknown>): Record<string, unknown> | undefined {
  if (typeof document.openapi !== 'string' || !document.openapi.startsWith('3.1')) return undefined;
  try {
    const translated = translate(document as JsonObject) as JsonObject;
    return { ...translated, openapi: '3.0.3' };
  } catch (error) {
    if (error instanceof Untranslatable) return undefined;
    throw error;
  }
}
