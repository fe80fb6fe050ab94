import { describe, expect, it } from "vitest";
import { Backoff, backoffDelay } from "./backoff";

const exact = { base: 500, max: 30_000, factor: 2, jitter: 0 };

describe("backoff", () => {
  it("doubles from the base and stops at the ceiling", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 10].map((a) => backoffDelay(a, exact))).toEqual([
      500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000,
    ]);
  });

  it("jitters within [half, whole] of the delay", () => {
    const opts = { ...exact, jitter: 0.5 };
    expect(backoffDelay(3, opts, () => 0)).toBe(2000);
    expect(backoffDelay(3, opts, () => 0.999999)).toBe(4000);
    for (let i = 0; i < 50; i++) {
      const d = backoffDelay(2, opts);
      expect(d).toBeGreaterThanOrEqual(1000);
      expect(d).toBeLessThanOrEqual(2000);
    }
  });

  it("counts attempts and starts over after reset", () => {
    const b = new Backoff(exact);
    expect([b.next(), b.next(), b.next()]).toEqual([500, 1000, 2000]);
    expect(b.attempts).toBe(3);
    b.reset();
    expect(b.next()).toBe(500);
  });
});
