// Reconnect delays: exponential with full jitter, capped, reset once a
// connection has proved itself (received its snapshot).

export interface BackoffOptions {
  /** first delay, ms */
  base: number;
  /** ceiling, ms */
  max: number;
  factor: number;
  /** 0: exact delays; 1: anywhere between half and the whole delay */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { base: 500, max: 30_000, factor: 2, jitter: 0.5 };

/** Delay before reconnect attempt `attempt` (0 = first retry). `random` in [0, 1). */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const raw = Math.min(options.max, options.base * Math.pow(options.factor, Math.max(0, attempt)));
  const spread = raw * options.jitter;
  return Math.round(raw - spread + spread * random());
}

/** Tracks attempts; `next()` gives the delay of the next try, `reset()` after success. */
export class Backoff {
  private attempt = 0;
  constructor(
    private readonly options: BackoffOptions = DEFAULT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const delay = backoffDelay(this.attempt, this.options, this.random);
    this.attempt += 1;
    return delay;
  }

  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}
