import { registerEnumType } from 'type-graphql';

/**
 * A GraphQL enum whose values the modules contribute (src/resource-module.ts composes them). type-graphql reads an
 * enum's values when the schema is built, not when it is registered, so the object can be filled after this.
 */
export class ComposedEnum<V extends string = string> {
  /** What `@Field(() => …)` names: key -> value, as type-graphql reads a TypeScript enum. */
  readonly type: Record<string, V> = {};
  private readonly valuesConfig: Record<string, { description?: string }> = {};

  constructor(
    name: string,
    description?: string,
    /** A value of the enum's own, listed after every contributed one (`ALL`: every type, present and future). */
    private readonly closing?: { key: string; value: V; description: string },
  ) {
    registerEnumType(this.type, { name, description, valuesConfig: this.valuesConfig });
    if (closing) {
      this.type[closing.key] = closing.value;
      this.valuesConfig[closing.key] = { description: closing.description };
    }
  }

  add(key: string, value: V, description?: string): void {
    if (key in this.type) throw new Error(`enum value ${key} is contributed twice`);
    this.type[key] = value;
    if (description) this.valuesConfig[key] = { description };
    // Moved behind the value just added: an object lists its keys in insertion order, and so does the enum.
    if (this.closing) {
      delete this.type[this.closing.key];
      this.type[this.closing.key] = this.closing.value;
    }
  }
}
