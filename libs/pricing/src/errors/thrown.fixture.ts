// What the specs share to look at an error: what a call threw, of the type it must be.

/** What `run` threw, which must be a `type` (fails the test when nothing is thrown). */
export function thrownAs<E extends Error>(type: abstract new (...args: never[]) => E, run: () => unknown): E {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as E;
  }
  throw new Error(`expected a ${type.name}, nothing was thrown`);
}
