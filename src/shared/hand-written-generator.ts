/**
 * What every async generator written by hand as a class shares (a stream that must end at once when returned, which a
 * generator function waiting on an event cannot): `throw` ends it as `return` does and rejects with the error, it is its
 * own iterator, and disposing of it returns it. Subclasses write `next` and `return`.
 */
export abstract class HandWrittenGenerator<T> implements AsyncGenerator<T> {
  abstract next(): Promise<IteratorResult<T>>;

  abstract return(): Promise<IteratorResult<T>>;

  async throw(error: unknown): Promise<IteratorResult<T>> {
    await this.return();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }
}
