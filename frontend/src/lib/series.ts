// Time-series helpers for the charts.

export interface Point {
  t: number;
  v: number;
}

/**
 * Split a series where consecutive points are more than `gapMs` apart, so a
 * chart draws a break (the portal or its worker was down) instead of a line
 * across time nobody measured.
 */
export function splitAtGaps(points: Point[], gapMs: number): Point[][] {
  const runs: Point[][] = [];
  for (const p of points) {
    const run = runs[runs.length - 1];
    if (run && p.t - run[run.length - 1].t <= gapMs) run.push(p);
    else runs.push([p]);
  }
  return runs;
}

/**
 * Columns for a chart library: x in seconds, then one column per series.
 * null: a break in that series' line; undefined: the series has no sample at
 * that time (another series has), and its line goes on across it (uPlot joins
 * over undefined and breaks at null).
 */
export type Aligned = [number[], ...(number | null | undefined)[][]];

/**
 * Put series sampled at their own times on one x axis (the union of their
 * times), and mark a break wherever a series' consecutive points are more than
 * `gapMs` apart: a null just after the earlier point, so that series' line
 * stops there (as `splitAtGaps` does for one series). Series sampled at
 * different times (a ledger's steps next to Prometheus' samples) do not break
 * each other's lines.
 */
export function alignSeries(series: { points: Point[] }[], gapMs: number): Aligned {
  const breaks = series.map((s) => {
    const own = new Set<number>();
    for (const [i, run] of splitAtGaps(s.points, gapMs).entries()) {
      if (i > 0) own.add(run[0].t - 1);
    }
    return own;
  });
  const times = [...new Set([...series.flatMap((s) => s.points.map((p) => p.t)), ...breaks.flatMap((b) => [...b])])].sort((a, b) => a - b);
  const columns = series.map((s, i) => {
    const at = new Map(s.points.map((p) => [p.t, p.v]));
    return times.map((t) => (breaks[i].has(t) ? null : at.get(t)));
  });
  return [times.map((t) => t / 1000), ...columns];
}
