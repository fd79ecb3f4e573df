/** The environment a composition root reads its settings from (`process.env` in Lambda and `npm start`). */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * An integer setting from `min` to `max`: unset or empty → `undefined`; anything else that is not such an
 * integer is a configuration error naming the variable and the value.
 */
export const integerSetting = (
  env: Environment,
  name: string,
  min: number,
  max: number,
): number | undefined => {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return parsed;
};
