import { describe, expect, it } from "vitest";
import { splitAtGaps } from "./series";

describe("splitAtGaps", () => {
  const p = (t: number, v = 1) => ({ t, v });

  it("keeps a regular series in one run", () => {
    expect(splitAtGaps([p(0), p(60), p(120)], 180)).toEqual([[p(0), p(60), p(120)]]);
  });

  it("breaks where the points are further apart than the gap", () => {
    expect(splitAtGaps([p(0), p(60), p(600), p(660), p(2000)], 180)).toEqual([[p(0), p(60)], [p(600), p(660)], [p(2000)]]);
  });

  it("handles no points and a gap of exactly the limit", () => {
    expect(splitAtGaps([], 10)).toEqual([]);
    expect(splitAtGaps([p(0), p(10)], 10)).toEqual([[p(0), p(10)]]);
  });
});
