/** Lazily built objects: the composition builds each dependency only when a function first uses it. */
/** An object whose members are built on first use, once each. */
export const lazyObject = <T extends object>(builders: { readonly [K in keyof T]: () => T[K] }): T => {
  const target = {} as T;
  for (const key of Object.keys(builders) as (keyof T)[]) {
    let built = false;
    let value: T[keyof T] | undefined;
    Object.defineProperty(target, key, {
      enumerable: true,
      get: () => {
        if (!built) {
          value = builders[key]();
          built = true;
        }
        return value;
      },
    });
  }
  return target;
};
