/** The error a call fails with, of the class expected (and a test failure if it succeeds or fails otherwise). */
export async function failure<E extends Error>(call: Promise<unknown>, kind: new (...args: never[]) => E): Promise<E> {
  try {
    await call;
  } catch (error) {
    if (error instanceof kind) return error;
    throw error;
  }
  throw new Error(`expected the call to fail with ${kind.name}`);
}
