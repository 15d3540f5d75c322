import { z } from 'zod';
import { DomainError } from '../errors/domain-error';

/**
 * The structural rules of GraphQL arguments (lengths, ranges, list sizes), declared on each args or input class by
 * `@ArgumentRules({...})`, zod schemas of its own fields, and checked by `validateArgument`, type-graphql's
 * `validateFn` (src/schema.ts), before a resolver runs. Every field is optional here: null and absent are GraphQL's
 * to refuse. A message may say `$property`, replaced with the field's name.
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

/** Text of `min` to `max` characters, matching `pattern` when one is given. */
export function text(limits: { min?: number; max: number }, message?: string, pattern?: { regex: RegExp; message: string }) {
  const min = limits.min ?? 0;
  return (pattern ? z.string().regex(pattern.regex, { message: pattern.message }) : z.string())
    .refine((value) => characters(value) >= min, { message: message ?? `$property must be longer than or equal to ${min} characters` })
    .refine((value) => characters(value) <= limits.max, { message: message ?? `$property must be shorter than or equal to ${limits.max} characters` })
    .nullish();
}

/** A whole number from `min` to `max`. */
export function integer(limits: { min?: number; max?: number }, message?: string) {
  let rule = z.number();
  if (limits.min !== undefined) rule = rule.min(limits.min, { message: message ?? `$property must not be less than ${limits.min}` });
  if (limits.max !== undefined) rule = rule.max(limits.max, { message: message ?? `$property must not be greater than ${limits.max}` });
  return rule.nullish();
}

/** A list of `min` to `max` items, each checked by `item` when given. */
export function list(item: z.ZodType | undefined, limits: { min?: number; max?: number }, messages: { min?: string; max?: string } = {}) {
  const { min = 0, max = Infinity } = limits;
  // `when`: the size is judged even when items are refused too, so both are named.
  return z
    .array(item ?? z.unknown())
    .refine((values) => values.length >= min, { message: messages.min ?? `$property must contain at least ${min} elements`, when: () => true })
    .refine((values) => values.length <= max, { message: messages.max ?? `$property must contain no more than ${max} elements`, when: () => true })
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

/**
 * One line per issue: a field's own issues before those of its fields, each prefixed with the path of the object
 * it is in (`input.params.summary must be …`).
 */
function describe(issues: Issue[]): string[] {
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
  const lines = (node: IssueNode): string[] => [
    ...node.issues.map((issue) => {
      const property = String(issue.path.at(-1) ?? '');
      const message = issue.message.replaceAll('$property', property);
      const prefix = issue.path.slice(0, -1).map(String).join('.');
      return prefix ? `${prefix}.${message}` : message;
    }),
    ...[...node.children.values()].flatMap(lines),
  ];
  return lines(root);
}

/** type-graphql's `validateFn`: an argument its class's rules refuse fails as BAD_USER_INPUT naming every field. */
export function validateArgument(value: unknown, type: unknown): void {
  if (!hasRules(type)) return;
  const rules = argumentRulesOf(type);
  for (const item of Array.isArray(value) ? value : [value]) {
    if (item === null || typeof item !== 'object') continue;
    const result = rules.safeParse(item);
    if (!result.success) throw DomainError.badInput(describe(result.error.issues).join('; '));
  }
}
