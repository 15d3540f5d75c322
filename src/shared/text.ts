import { DomainError } from '../errors/domain-error';

/**
 * Names and references are stored trimmed, and their length rules apply to what is stored: "   " is an empty
 * name, not a three-character one.
 */
export function trimmedText(value: string, field: string, rule: { min: number; max: number }): string {
  const text = value.trim();
  if (text.length < rule.min) {
    throw DomainError.badInput(rule.min === 1 ? `${field} must not be empty` : `${field} must be at least ${rule.min} characters`);
  }
  if (text.length > rule.max) throw DomainError.badInput(`${field} must be at most ${rule.max} characters`);
  return text;
}
