interface Waiting<Input, Output> {
  readonly input: Input;
  readonly resolve: (output: Output) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Groups calls that arrive while earlier batches are in flight (the DataLoader pattern without a timer): a call
 * on an idle batcher runs at once as a batch of one, and calls arriving meanwhile go out together as soon as a
 * slot frees, up to `maxBatch` per batch and `maxInFlight` batches at a time. Under load one request carries
 * many calls; when idle nothing waits. A failed batch fails each of its calls.
 */
export class Batcher<Input, Output> {
  private readonly queue: Waiting<Input, Output>[] = [];
  private inFlight = 0;

  constructor(
    /** Must answer one output per input, in order. */
    private readonly run: (inputs: readonly Input[]) => Promise<readonly Output[]>,
    private readonly maxBatch: number,
    private readonly maxInFlight = 1,
  ) {}

  submit(input: Input): Promise<Output> {
    return new Promise<Output>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight += 1;
      this.execute(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  private async execute(batch: readonly Waiting<Input, Output>[]): Promise<void> {
    try {
      const outputs = await this.run(batch.map((waiting) => waiting.input));
      if (outputs.length !== batch.length)
        throw new Error(`batch answered ${outputs.length} results for ${batch.length} inputs`);
      for (const [index, waiting] of batch.entries()) waiting.resolve(outputs[index] as Output);
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }
}
