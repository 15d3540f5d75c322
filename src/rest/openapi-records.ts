import {
  getNullableType,
  isEnumType,
  isListType,
  isObjectType,
  isUnionType,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { isDeepStrictEqual } from 'node:util';
import { isVerbatim, restFieldName } from './names';
import { enumSchema, enumStrings, orNull, restDescription, splitNull, type SchemaComponents } from './openapi-components';
import type { JsonSchema } from './record';
import type { RestRoute } from './route';

/**
 * Names the records of a route's payload schema (as src/rest/record.ts compiled it) so that routes answering the same
 * record share one component:
 * - a selection that is one fragment spread (`post { ...RestPostFields }`) is the component named after the fragment
 *   (`Post`): every route selecting the fragment answers that record;
 * - an enum is the component named after the GraphQL enum (`PostState`), shared with the parameters that take it;
 * - every field gets its GraphQL description.
 * The walk follows the operation's selection beside the compiled schema, naming fields by the same rule as the
 * compiler (src/rest/names.ts); a property the rule does not find is a start-up error, never a silent miss.
 */
export function nameRecords(
  graphqlSchema: GraphQLSchema,
  route: RestRoute,
  payload: JsonSchema,
  components: SchemaComponents,
  options: { where: string; rootMayBeShared: boolean },
): JsonSchema {
  const walker = new RecordWalker(graphqlSchema, route, components, options.where);
  const paths = typeof route.payload.at === 'string' ? [route.payload.at] : route.payload.at;
  const operation = route.operation.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error(`${options.where}: no operation`);
  const branches = paths.map((path, index) => {
    const branch = paths.length === 1 ? payload : ((payload.oneOf as JsonSchema[] | undefined)?.[index]);
    if (!branch) throw new Error(`${options.where}: the payload schema has no branch for ${path}`);
    const { field, type } = walker.locate(operation, path);
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
  private readonly fragments = new Map<string, FragmentDefinitionNode>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly route: RestRoute,
    private readonly components: SchemaComponents,
    private readonly where: string,
  ) {
    for (const definition of route.operation.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(definition.name.value, definition);
    }
  }

  private fieldsOf(selectionSet: SelectionSetNode): FieldNode[] {
    return selectionSet.selections.flatMap((selection) => {
      if (selection.kind === Kind.FIELD) return [selection];
      if (selection.kind === Kind.INLINE_FRAGMENT) return this.fieldsOf(selection.selectionSet);
      const fragment = this.fragments.get(selection.name.value);
      if (!fragment) throw new Error(`${this.where}: unknown fragment ${selection.name.value}`);
      return this.fieldsOf(fragment.selectionSet);
    });
  }

  locate(operation: OperationDefinitionNode, path: string): { field: FieldNode; type: GraphQLOutputType } {
    let parent: GraphQLObjectType | undefined | null = this.schema.getRootType(operation.operation);
    let selectionSet: SelectionSetNode | undefined = operation.selectionSet;
    let found: { field: FieldNode; type: GraphQLOutputType } | undefined;
    for (const key of path.split('.')) {
      const field: FieldNode | undefined = selectionSet && this.fieldsOf(selectionSet).find((node) => (node.alias ?? node.name).value === key);
      const definition = field && parent ? parent.getFields()[field.name.value] : undefined;
      if (!field || !definition) throw new Error(`${this.where}: ${path} is not selected by the operation`);
      found = { field, type: definition.type };
      const nullable = getNullableType(definition.type);
      const inner = isListType(nullable) ? getNullableType(nullable.ofType) : nullable;
      parent = isObjectType(inner) ? inner : undefined;
      selectionSet = field.selectionSet;
    }
    if (!found) throw new Error(`${this.where}: an empty payload path`);
    return found;
  }

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
    const fields = this.fieldsOf(selectionSet).map((node) => {
      const definition = type.getFields()[node.name.value];
      if (!definition) throw new Error(`${this.where}: ${type.name}.${node.name.value} is not a field`);
      const key = (node.alias ?? node.name).value;
      // The compiler's rule (src/rest/record.ts): an alias in snake_case, a field by the route's names; the aliases
      // of a union field are that one field.
      const union = isUnionType(getNullableType(definition.type));
      const restName = verbatim ? key : node.alias && !union ? restFieldName({}, type.name, key) : restFieldName(this.route.payload, type.name, definition.name);
      return { node, definition, restName };
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
