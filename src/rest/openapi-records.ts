import {
  getNullableType,
  isEnumType,
  isListType,
  isObjectType,
  isUnionType,
  Kind,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { isDeepStrictEqual } from 'node:util';
import { isVerbatim } from './names';
import { enumSchema, enumStrings, orNull, restDescription, splitNull, type SchemaComponents } from './openapi-components';
import type { JsonSchema } from './record';
import type { RestRoute } from './route';
import { OperationSelections, recordFieldName } from './selection';

/**
 * Names the records of a route's payload schema (as src/rest/record.ts compiled it), so that routes answering the
 * same record share one component: docs/openapi.md, "Records". The walk follows the operation's selection beside the
 * compiled schema, naming fields by the compiler's rule (src/rest/names.ts); a property the rule does not find is a
 * start-up error, never a silent miss.
 */
export function nameRecords(
  graphqlSchema: GraphQLSchema,
  route: RestRoute,
  payload: JsonSchema,
  components: SchemaComponents,
  options: { where: string; rootMayBeShared: boolean },
): JsonSchema {
  const walker = new RecordWalker(new OperationSelections(graphqlSchema, route.operation, options.where), route, components, options.where);
  const paths = typeof route.payload.at === 'string' ? [route.payload.at] : route.payload.at;
  const operation = route.operation.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error(`${options.where}: no operation`);
  const branches = paths.map((path, index) => {
    const branch = paths.length === 1 ? payload : ((payload.oneOf as JsonSchema[] | undefined)?.[index]);
    if (!branch) throw new Error(`${options.where}: the payload schema has no branch for ${path}`);
    const { field, type } = walker.selections.locate(operation, path);
    return walker.walk(branch, type, field.selectionSet, false, options.rootMayBeShared);
  });
  return paths.length === 1 ? branches[0]! : { ...payload, oneOf: branches };
}

/** `RestPostFields` -> `Post`. */
function componentName(fragment: string): string {
  return fragment.replace(/^Rest(?=[A-Z])/, '').replace(/(?<=.)Fields$/, '');
}

/** The field's description first, then what the compiler said of its unit (`milliseconds since epoch`). */
function describe(schema: JsonSchema, description: string | undefined): JsonSchema {
  if (!description) return schema;
  const unit = typeof schema.description === 'string' ? schema.description : undefined;
  return { ...schema, description: unit ? `${description.replace(/\.?$/, '.')} In ${unit}.` : description };
}

class RecordWalker {
  constructor(
    readonly selections: OperationSelections,
    private readonly route: RestRoute,
    private readonly components: SchemaComponents,
    private readonly where: string,
  ) {}

  walk(schema: JsonSchema, type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, verbatim: boolean, mayBeShared: boolean): JsonSchema {
    const { core, nullable } = splitNull(schema);
    const inner = getNullableType(type);
    let named: JsonSchema;
    if (isListType(inner)) {
      named = { ...core, items: this.walk(core.items as JsonSchema, inner.ofType, selectionSet, verbatim, true) };
    } else if (isEnumType(inner)) {
      const form = verbatim ? 'names' : 'values';
      if (!isDeepStrictEqual(core.enum, enumStrings(inner, form))) throw new Error(`${this.where}: ${inner.name} is not written as its ${form}`);
      named = enumSchema(this.components, inner, form, this.where);
    } else if (isObjectType(inner)) {
      if (!selectionSet) throw new Error(`${this.where}: ${inner.name} without a selection`);
      named = this.object(core, inner, selectionSet, verbatim, mayBeShared);
    } else if (isUnionType(inner)) {
      // Its members, as compiled (src/rest/record.ts unionShape): spelled out, not shared as components.
      named = core;
    } else {
      named = core;
    }
    return nullable ? orNull(named) : named;
  }

  private object(schema: JsonSchema, type: GraphQLObjectType, selectionSet: SelectionSetNode, verbatim: boolean, mayBeShared: boolean): JsonSchema {
    const compiled = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const fields = this.selections.fieldsOf(selectionSet).map((node) => {
      const definition = type.getFields()[node.name.value];
      if (!definition) throw new Error(`${this.where}: ${type.name}.${node.name.value} is not a field`);
      return { node, definition, restName: recordFieldName(this.route.payload, type, node, definition, verbatim) };
    });
    const renames = new Map(fields.map(({ definition, restName }) => [definition.name, restName]));
    const properties: Record<string, JsonSchema> = {};
    for (const { node, definition, restName } of fields) {
      if (restName in properties) continue;
      const property = compiled[restName];
      if (!property) throw new Error(`${this.where}: the record of ${type.name} has no ${restName}`);
      const fieldVerbatim = verbatim || isVerbatim(this.route.payload, type.name, definition.name);
      const walked = this.walk(property, definition.type, node.selectionSet, fieldVerbatim, true);
      properties[restName] = describe(walked, definition.description ? restDescription(definition.description, renames) : undefined);
    }
    const stray = Object.keys(compiled).filter((name) => !(name in properties));
    if (stray.length > 0) throw new Error(`${this.where}: the record of ${type.name} has ${stray.join(', ')}, which its selection does not name`);
    const named = { ...schema, properties };
    const [only] = selectionSet.selections;
    if (mayBeShared && !verbatim && selectionSet.selections.length === 1 && only?.kind === Kind.FRAGMENT_SPREAD) {
      return this.components.add(componentName(only.name.value), named, this.where);
    }
    return named;
  }
}
