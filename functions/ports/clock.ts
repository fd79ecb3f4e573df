/** Time is injected: nothing outside the composition root reads the system clock directly. */
export interface Clock {
  now(): Date;
}
