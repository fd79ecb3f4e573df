const ignore = (): void => undefined;

/**
 * Shares one read among concurrent callers without ever answering a caller with a read that was issued before
 * it called. A caller that arrives while a read is in flight waits for the next read, which starts as soon as
 * the current one settles and is shared by everyone who arrived meanwhile. A consistent read stays
 * linearizable (whatever was written before the call is seen), and any number of concurrent callers cost at
 * most one read in flight plus one waiting.
 */
export class CoalescedRead<Value> {
  private inFlight: Promise<Value> | undefined;
  private next: Promise<Value> | undefined;

  constructor(private readonly read: () => Promise<Value>) {}

  get(): Promise<Value> {
    if (!this.inFlight) return this.start();
    if (!this.next) {
      this.next = this.inFlight.then(ignore, ignore).then(() => {
        this.next = undefined;
        return this.start();
      });
    }
    return this.next;
  }

  private start(): Promise<Value> {
    const reading = this.read();
    this.inFlight = reading;
    const clear = (): void => {
      if (this.inFlight === reading) this.inFlight = undefined;
    };
    reading.then(clear, clear);
    return reading;
  }
}
