import { ArgsType, ClassType, Field, Int, ObjectType } from 'type-graphql';
import { ArgumentRules, integer } from './argument-rules';
import { PageSize } from './relay-connection';

export type { Page } from '../shared/page';

/**
 * Page-numbered lists: the REST lists (`page`, `per_page`, `found`) and their GraphQL twins. Cursor lists are the
 * connections of src/graphql/relay-connection.ts.
 */

/** Adds `page` and `perPage` to an args class of filters; `perPage` 1 to `max` (more is refused, never cut). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function withPageArgs<TBase extends new (...args: any[]) => object>(Base: TBase, perPage: { default: number; max: number }) {
  @ArgsType()
  @ArgumentRules({
    page: integer({ min: 1 }),
    perPage: integer({ min: 1, max: perPage.max }),
  })
  class WithPageArgs extends Base {
    @Field(() => Int, { defaultValue: 1, description: '1-based.' })
    page: number = 1;

    @Field(() => Int, { defaultValue: perPage.default, description: `1 to ${perPage.max}.` })
    @PageSize(perPage.max)
    perPage: number = perPage.default;
  }
  return WithPageArgs;
}

/**
 * The GraphQL type of a page: `found`, `page`, `perPage`, and the items under `itemsField`; with `endsEarly`, also
 * `nextSkip`, for a page that can end before `perPage` items (a byte budget) and says how to read on.
 */
export function PageType<T extends object>(itemType: ClassType<T>, name: string, itemsField: string, options: { endsEarly?: boolean } = {}): ClassType {
  class PageClass {
    found!: number;
    page!: number;
    perPage!: number;
    nextSkip?: number | null;
  }
  // Decorators applied by hand: the items' property is named by the caller.
  Field(() => Int, { description: 'Items matching the filters, over all pages.' })(PageClass.prototype, 'found');
  Field(() => Int)(PageClass.prototype, 'page');
  Field(() => Int)(PageClass.prototype, 'perPage');
  Field(() => [itemType])(PageClass.prototype, itemsField);
  if (options.endsEarly) {
    Field(() => Int, {
      nullable: true,
      description: 'Null when the page holds every item of its range. Otherwise it ended early (its byte budget): ask for the same page with this skip to read on.',
    })(PageClass.prototype, 'nextSkip');
  }
  ObjectType(name)(PageClass);
  return PageClass;
}
