import { describe, expect, it } from "vitest";
import { alignSeries, splitAtGaps } from "./series";

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

describe("alignSeries", () => {
  const pts = (...ts: number[]) => ts.map((t) => ({ t, v: t / 1000 }));

  it("puts the series on the union of their times, in seconds, null where one has no value", () => {
    const [xs, a, b] = alignSeries([{ points: pts(0, 60_000) }, { points: pts(60_000, 120_000) }], Infinity);
    expect(xs).toEqual([0, 60, 120]);
    expect(a).toEqual([0, 60, null]);
    expect(b).toEqual([null, 60, 120]);
  });

  it("breaks the line after a gap longer than gapMs with a null just after the earlier point", () => {
    const [xs, a] = alignSeries([{ points: pts(0, 60_000, 600_000) }], 180_000);
    expect(xs).toEqual([0, 60, 599.999, 600]);
    expect(a).toEqual([0, 60, null, 600]);
  });

  it("has only the x column for no series", () => {
    expect(alignSeries([], 1000)).toEqual([[]]);
  });
});
