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
