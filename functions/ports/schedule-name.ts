/** EventBridge Scheduler's name rule, enforced by both scheduler adapters so they accept the same names. */
export const SCHEDULE_NAME_PATTERN = /^[0-9a-zA-Z\-_.]{1,64}$/;

export class InvalidScheduleNameError extends Error {
  constructor(name: string) {
    super(`schedule name must match ${SCHEDULE_NAME_PATTERN}: ${JSON.stringify(name)}`);
    this.name = 'InvalidScheduleNameError';
  }
}

export const assertScheduleName = (name: string): void => {
  if (!SCHEDULE_NAME_PATTERN.test(name)) throw new InvalidScheduleNameError(name);
};
