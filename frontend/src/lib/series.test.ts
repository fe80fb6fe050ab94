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

  it("puts the series on the union of their times, in seconds, undefined (joined over) where one has no value", () => {
    const [xs, a, b] = alignSeries([{ points: pts(0, 60_000) }, { points: pts(60_000, 120_000) }], Infinity);
    expect(xs).toEqual([0, 60, 120]);
    expect(a).toStrictEqual([0, 60, undefined]);
    expect(b).toStrictEqual([undefined, 60, 120]);
  });

  it("does not break a series' line at another series' samples", () => {
    // a ledger's steps next to Prometheus' samples, a second apart
    const [xs, booked, used] = alignSeries([{ points: pts(0, 15_000, 30_000) }, { points: pts(1_000, 16_000) }], 45_000);
    expect(xs).toEqual([0, 1, 15, 16, 30]);
    expect(booked).toStrictEqual([0, undefined, 15, undefined, 30]);
    expect(used).toStrictEqual([undefined, 1, undefined, 16, undefined]);
    expect([...booked, ...used]).not.toContain(null);
  });

  it("breaks the line after a gap longer than gapMs with a null just after the earlier point", () => {
    const [xs, a] = alignSeries([{ points: pts(0, 60_000, 600_000) }], 180_000);
    expect(xs).toEqual([0, 60, 599.999, 600]);
    expect(a).toEqual([0, 60, null, 600]);
  });

  it("breaks only the series that has the gap", () => {
    const [xs, a, b] = alignSeries([{ points: pts(0, 60_000, 600_000) }, { points: pts(0, 300_000, 600_000) }], 400_000);
    expect(xs).toEqual([0, 60, 300, 599.999, 600]);
    expect(a).toStrictEqual([0, 60, undefined, null, 600]);
    expect(b).toStrictEqual([0, undefined, 300, undefined, 600]);
  });

  it("has only the x column for no series", () => {
    expect(alignSeries([], 1000)).toEqual([[]]);
  });
});
