import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render } from "@testing-library/react";
import { act } from "react";
import { I18nProvider } from "../i18n/I18nProvider";
import { LineChart, type Series } from "./Charts";

// A stand-in for uPlot (no canvas here): it keeps its options, so the test can
// play the hooks uPlot calls when the user drags across the chart.
type Scale = { min: number | null; max: number | null };
type Options = {
  hooks: Record<string, ((u: FakePlotType, key?: string) => void)[]>;
  scales: { x: { range: (u: FakePlotType, min: number, max: number) => [number, number] } };
};
interface FakePlotType {
  opts: Options;
  scales: { x: Scale };
  select: { left: number; width: number };
  setScaleCalls: Scale[];
  setScale(key: string, range: Scale, record?: boolean): void;
}
const { FakePlot, made } = vi.hoisted(() => {
  const made: FakePlotType[] = [];
  class FakePlot implements FakePlotType {
    scales: { x: Scale } = { x: { min: null, max: null } };
    select = { left: 0, width: 0 };
    over = document.createElement("div");
    setScaleCalls: Scale[] = [];
    constructor(
      public opts: Options,
      public data: number[][],
    ) {
      made.push(this);
      const xs = data[0];
      this.setScale("x", { min: xs[0], max: xs[xs.length - 1] }, false);
    }
    setScale(key: string, range: Scale, record = true) {
      if (record) this.setScaleCalls.push(range);
      const [min, max] = this.opts.scales.x.range(this, range.min ?? 0, range.max ?? 0);
      this.scales.x = { min, max };
      for (const hook of this.opts.hooks.setScale ?? []) hook(this, key);
    }
    posToVal(px: number) {
      return px; // one pixel per second
    }
    setData() {}
    setSize() {}
    destroy() {}
  }
  return { FakePlot, made };
});
vi.mock("uplot", () => ({ default: FakePlot }));

afterEach(() => {
  cleanup();
  made.length = 0;
});

function series(points: number): Series[] {
  return [{ name: "Ascend310P", color: "#000", points: Array.from({ length: points }, (_, i) => ({ t: i * 60_000, v: i })) }];
}

function chart(props: { yMax?: number }) {
  return <I18nProvider locale="en"><LineChart series={series(61)} {...props} /></I18nProvider>;
}

describe("a zoomed line chart", () => {
  it("keeps its period when the chart is made again", () => {
    const { rerender, getByTestId } = render(chart({ yMax: 10 }));
    const first = made[made.length - 1];
    expect(first.scales.x).toEqual({ min: 0, max: 3600 });
    // the user drags across 600..1200 s: uPlot sets the selection, then the scale
    act(() => {
      first.select = { left: 600, width: 600 };
      for (const hook of first.opts.hooks.setSelect) hook(first);
      first.setScale("x", { min: 600, max: 1200 });
    });
    expect(getByTestId("line-chart-plot").dataset.from).toBe("600");
    // a new y axis makes the chart again (live samples raised the maximum)
    rerender(chart({ yMax: 20 }));
    const second = made[made.length - 1];
    expect(second).not.toBe(first);
    expect(second.scales.x).toEqual({ min: 600, max: 1200 });
    expect(getByTestId("line-chart-plot").dataset.to).toBe("1200");
  });

  it("starts from the data's ends when it was not zoomed", () => {
    const { rerender } = render(chart({ yMax: 10 }));
    rerender(chart({ yMax: 20 }));
    const second = made[made.length - 1];
    expect(second.setScaleCalls).toEqual([]);
    expect(second.scales.x).toEqual({ min: 0, max: 3600 });
  });
});
