import type { GraphQLResolveInfo } from 'graphql';
import { getNamedType } from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import { z } from 'zod';
import { DomainError, type FieldProblem } from '../errors/domain-error';

/**
 * The structural rules of GraphQL arguments (lengths, ranges, list sizes), declared on each args or input class by
 * `@ArgumentRules({...})`, zod schemas of its own fields, and checked by `validateArgument`, type-graphql's
 * `validateFn` (src/schema.ts), before a resolver runs. Every field is optional here: null and absent are GraphQL's
 * to refuse. A rule's message says what is wrong without naming the field (`must be at most 200 characters`): the
 * refusal carries the field's path, which each transport names in its own words (GraphQL `input.params.summary`,
 * REST `params.summary`).
 */

type InputClass = abstract new (...args: never[]) => object;

/** The rules of each class's own fields. */
const ownRules = new Map<unknown, z.ZodRawShape>();

/** Declares the rules of the class's own fields (inherited fields keep their class's rules). */
export function ArgumentRules(shape: z.ZodRawShape): ClassDecorator {
  return (type) => {
    ownRules.set(type, shape);
  };
}

type Issue = z.ZodError['issues'][number];

/** Text length counted in characters (code points), not UTF-16 units. */
function characters(text: string): number {
  return [...text].length;
}

/** Text of `min` to `max` characters, matching `pattern` when one is given. Messages say what is wrong, not where. */
export function text(limits: { min?: number; max: number }, pattern?: { regex: RegExp; message: string }) {
  const min = limits.min ?? 0;
  return (pattern ? z.string().regex(pattern.regex, { message: pattern.message }) : z.string())
    .refine((value) => characters(value) >= min, { message: min === 1 ? 'must not be empty' : `must be at least ${min} characters` })
    .refine((value) => characters(value) <= limits.max, { message: `must be at most ${limits.max} characters` })
    .nullish();
}

/** A whole number from `min` to `max`. */
export function integer(limits: { min?: number; max?: number }) {
  const { min, max } = limits;
  const range = min !== undefined && max !== undefined ? `must be between ${min} and ${max}` : undefined;
  let rule = z.number();
  if (min !== undefined) rule = rule.min(min, { message: range ?? `must be at least ${min}` });
  if (max !== undefined) rule = rule.max(max, { message: range ?? `must be at most ${max}` });
  return rule.nullish();
}

/** A list of `min` to `max` items, each checked by `item` when given. `noun`: what the items are, for the message. */
export function list(item: z.ZodType | undefined, limits: { min?: number; max?: number }, noun = 'items') {
  const { min = 0, max = Infinity } = limits;
  // `when`: the size is judged even when items are refused too, so both are named.
  return z
    .array(item ?? z.unknown())
    .refine((values) => values.length >= min, { message: `must name at least ${min === 1 ? `one ${noun.replace(/s$/, '')}` : `${min} ${noun}`}`, when: () => true })
    .refine((values) => values.length <= max, { message: `may hold at most ${max} ${noun}`, when: () => true })
    .nullish();
}

/** A nested input, checked by its own rules. */
export function nested(type: InputClass) {
  return argumentRulesOf(type).nullish();
}

const merged = new Map<unknown, z.ZodObject>();

/**
 * The rules of a class with those it inherits: its own fields first, then those of its ancestors from the root down
 * (the order its refusals are named in).
 */
function argumentRulesOf(type: InputClass): z.ZodObject {
  let rules = merged.get(type);
  if (!rules) {
    const ancestors: unknown[] = [];
    for (let current: unknown = Object.getPrototypeOf(type); typeof current === 'function' && current !== Function.prototype; current = Object.getPrototypeOf(current)) {
      ancestors.unshift(current);
    }
    rules = z.object(Object.assign({}, ownRules.get(type), ...ancestors.map((ancestor) => ownRules.get(ancestor))));
    merged.set(type, rules);
  }
  return rules;
}

function hasRules(type: unknown): type is InputClass {
  for (let current = type; typeof current === 'function' && current !== Function.prototype; current = Object.getPrototypeOf(current)) {
    if (ownRules.has(current)) return true;
  }
  return false;
}

interface IssueNode {
  issues: Issue[];
  children: Map<PropertyKey, IssueNode>;
}

/** One refused field per issue: a field's own issues before those of its fields, each at its path below `at`. */
function fieldProblems(issues: Issue[], at: readonly (string | number)[]): FieldProblem[] {
  const root: IssueNode = { issues: [], children: new Map() };
  for (const issue of issues) {
    let node = root;
    for (const key of issue.path) {
      let child = node.children.get(key);
      if (!child) node.children.set(key, (child = { issues: [], children: new Map() }));
      node = child;
    }
    node.issues.push(issue);
  }
  const problems = (node: IssueNode): FieldProblem[] => [
    ...node.issues.map((issue) => ({ path: [...at, ...issue.path.map((key) => (typeof key === 'number' ? key : String(key)))], problem: issue.message })),
    ...[...node.children.values()].flatMap(problems),
  ];
  return problems(root);
}

/**
 * The argument an input class's value is, where type-graphql passes one argument (`@Arg('input')`) rather than all of
 * them (`@Args()`, whose fields are the arguments): the field's one argument of that input type, or none.
 */
function argumentOf(type: InputClass, info: GraphQLResolveInfo | undefined): string[] {
  if (!info) return [];
  const inputName = getMetadataStorage().inputTypes.find((input) => input.target === type)?.name;
  if (!inputName) return [];
  const args = info.parentType.getFields()[info.fieldName]?.args ?? [];
  const matching = args.filter((arg) => getNamedType(arg.type).name === inputName);
  return matching.length === 1 ? [matching[0]!.name] : [];
}

/** type-graphql's `validateFn`: an argument its class's rules refuse fails as BAD_USER_INPUT naming every field. */
export function validateArgument(value: unknown, type: unknown, resolverData?: { info?: GraphQLResolveInfo }): void {
  if (!hasRules(type)) return;
  const rules = argumentRulesOf(type);
  const at = argumentOf(type, resolverData?.info);
  const items = Array.isArray(value) ? value.map((item, index) => [item, [...at, index]] as const) : [[value, at] as const];
  for (const [item, path] of items) {
    if (item === null || typeof item !== 'object') continue;
    const result = rules.safeParse(item);
    if (!result.success) throw DomainError.badFields(fieldProblems(result.error.issues, path));
  }
}
