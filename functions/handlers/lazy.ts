/**
 * Lambda entry points build their dependencies on the first invocation (not at import), so the same module
 * can be imported by tests and by the local stack, which inject their own dependencies instead.
 */
export const lazyHandler = <Event, Result, Ctx>(
  build: () => (event: Event, context: Ctx) => Promise<Result>,
): ((event: Event, context: Ctx) => Promise<Result>) => {
  let built: ((event: Event, context: Ctx) => Promise<Result>) | undefined;
  return (event, context) => {
    built ??= build();
    return built(event, context);
  };
};
