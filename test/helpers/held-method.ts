/**
 * A proxy of a real store whose chosen method, on its next call with matching arguments, runs
 * for real and then waits to answer until the test releases it: a deterministic way to put
 * another operation in the window between a read and what the caller does with it.
 */

/** One armed hold: `reached` resolves once the held call has its answer; `release` lets it return. */
export interface Hold {
  reached: Promise<void>;
  release: () => void;
}

/**
 * Wraps `target` so that `hold()` arms a hold of the next call of `method` whose arguments pass
 * `matches`; other calls and other members pass straight through.
 * @param target the real object (its methods run with it as `this`)
 * @param method the name of the async method to hold
 * @param matches which calls to hold (default: any)
 */
export function heldMethod<T extends object>(target: T, method: keyof T & string, matches: (...args: unknown[]) => boolean = () => true): { proxy: T; hold: () => Hold } {
  let gate: { reached: () => void; released: Promise<void> } | undefined;
  const proxy = new Proxy(target, {
    get(real, property, receiver) {
      const value = Reflect.get(real, property, receiver) as unknown;
      if (property !== method || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const answer = (await (value as (...inner: unknown[]) => Promise<unknown>).apply(real, args)) as unknown;
        const held = matches(...args) ? gate : undefined;
        if (held) {
          gate = undefined;
          held.reached();
          await held.released;
        }
        return answer;
      };
    },
  });
  return {
    proxy,
    hold() {
      let reached: () => void = () => undefined;
      let release: () => void = () => undefined;
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
      gate = { reached, released: new Promise<void>((resolve) => (release = resolve)) };
      return { reached: reachedPromise, release };
    },
  };
}
