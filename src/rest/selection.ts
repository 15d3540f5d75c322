import {
  getNullableType,
  isListType,
  isObjectType,
  isUnionType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { restFieldName, type RestNaming } from './names';

/**
 * A route operation's selections read by response key, for the two walks over a REST record: the compiler that
 * writes it (src/rest/record.ts) and the namer of its /openapi.json components (src/rest/openapi-records.ts). Both
 * read the same fields by the same rules, so the schema the document shows is the record the route writes.
 */
export class OperationSelections {
  private readonly fragments = new Map<string, FragmentDefinitionNode>();

  constructor(
    private readonly schema: GraphQLSchema,
    document: DocumentNode,
    private readonly where: string,
  ) {
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(definition.name.value, definition);
    }
  }

  fragment(name: string): FragmentDefinitionNode | undefined {
    return this.fragments.get(name);
  }

  /** The fields of a selection set in order, with fragment spreads and inline fragments expanded. */
  fieldsOf(selectionSet: SelectionSetNode): FieldNode[] {
    return selectionSet.selections.flatMap((selection) => {
      if (selection.kind === Kind.FIELD) return [selection];
      if (selection.kind === Kind.INLINE_FRAGMENT) return this.fieldsOf(selection.selectionSet);
      const fragment = this.fragments.get(selection.name.value);
      if (!fragment) throw new Error(`${this.where}: unknown fragment ${selection.name.value}`);
      return this.fieldsOf(fragment.selectionSet);
    });
  }

  /** Follows `path` (response keys) from the operation's root to the field the payload is. */
  locate(operation: OperationDefinitionNode, path: string): { field: FieldNode; type: GraphQLOutputType; coordinate: string } {
    let parent: GraphQLObjectType | undefined | null = this.schema.getRootType(operation.operation);
    let selectionSet: SelectionSetNode | undefined = operation.selectionSet;
    let found: { field: FieldNode; type: GraphQLOutputType; coordinate: string } | undefined;
    for (const key of path.split('.')) {
      if (!parent || !selectionSet) throw new Error(`${this.where}: ${path} does not lead to a field`);
      const field: FieldNode | undefined = this.fieldsOf(selectionSet).find((node) => (node.alias ?? node.name).value === key);
      const definition = field ? parent.getFields()[field.name.value] : undefined;
      if (!field || !definition) throw new Error(`${this.where}: ${path} is not selected by the operation`);
      found = { field, type: definition.type, coordinate: `${parent.name}.${definition.name}` };
      const named = getNullableType(definition.type);
      const inner = isListType(named) ? getNullableType(named.ofType) : named;
      parent = isObjectType(inner) ? inner : undefined;
      selectionSet = field.selectionSet;
    }
    if (!found) throw new Error(`${this.where}: an empty payload path`);
    return found;
  }
}

/**
 * A selected field's name in its REST record: the response key below a verbatim field (the provider's own body); an
 * alias is the operation's own choice of name, in snake_case like a field's; otherwise the field's REST name. The
 * aliases of one union field (each selecting some of its members) are that one field, under its own name.
 */
export function recordFieldName(naming: RestNaming, type: GraphQLObjectType, node: FieldNode, definition: GraphQLField<unknown, unknown>, verbatim: boolean): string {
  if (isUnionType(getNullableType(definition.type))) return restFieldName(naming, type.name, definition.name);
  const key = (node.alias ?? node.name).value;
  if (verbatim) return key;
  return node.alias ? restFieldName({}, type.name, key) : restFieldName(naming, type.name, definition.name);
}
