// Charts: a time series with zoom and a legend under the cursor (uPlot), and
// stacked horizontal bars (a few divs).

import { useEffect, useMemo, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useT } from "../i18n/I18nProvider";
import { alignSeries } from "../lib/series";

export interface Series {
  name: string;
  color: string;
  points: { t: number; v: number }[];
  /** a dashed line (e.g. what was booked, next to what is used) */
  dash?: number[];
}

const PALETTE = ["#2f6fde", "#2aa198", "#8a63d2", "#d07a2b", "#c2477f", "#5c8a3a"];
export const seriesColor = (i: number) => PALETTE[i % PALETTE.length];

function axisTime(t: number, withDay: boolean): string {
  if (!withDay) return timeLabel(t);
  const d = new Date(t);
  return `${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")} ${timeLabel(t)}`;
}

function timeLabel(t: number): string {
  const d = new Date(t);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

/**
 * Draw a series' points when it has few values in view: uPlot's own rule
 * (points no closer than `points.space`), counting this series' values rather
 * than the x axis' (which other series fill), so that a series with a few
 * samples among many of another's still shows.
 */
function sparse(u: uPlot, seriesIdx: number, idx0: number, idx1: number): boolean {
  const ys = u.data[seriesIdx];
  let n = 0;
  for (let i = idx0; i <= idx1; i++) if (ys[i] != null) n++;
  const xs = u.data[0];
  const dim = Math.abs(u.valToPos(xs[idx1], "x", true) - u.valToPos(xs[idx0], "x", true));
  const space = u.series[seriesIdx].points?.space ?? 8;
  return n > 0 && n <= Math.max(1, dim / (space * uPlot.pxRatio));
}

/**
 * A time series with zoom: drag across the chart to zoom into a period,
 * double-click or "Reset zoom" to see the whole period again; the legend shows
 * each series' value under the cursor. Drawn by uPlot (canvas; see
 * frontend/README.md, "Libraries"). Live data keep a zoom the user chose.
 */
export function LineChart({
  series,
  height = 180,
  yMax,
  yFormat = (v) => String(Math.round(v)),
  empty,
  minSpan = 10 * 60_000,
  until,
  gapMs = Infinity,
  onZoom,
  onResetZoom,
  ySize = 44,
}: {
  series: Series[];
  height?: number;
  yMax?: number;
  yFormat?: (v: number) => string;
  empty?: string;
  /** the x axis covers at least this many ms */
  minSpan?: number;
  /** end of the x axis (default: the last point) */
  until?: number;
  /** points further apart than this are not joined (a break in the line) */
  gapMs?: number;
  /** called with the period (ms) the user dragged across, to fetch finer data for it */
  onZoom?: (fromMs: number, toMs: number) => void;
  /** called when the user resets the zoom (button or double-click) */
  onResetZoom?: () => void;
  /** width of the y axis, px (wider for labels like "21.0 GiB") */
  ySize?: number;
}) {
  const t = useT();
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const zoomed = useRef(false);
  // The zoomed period, so that a chart made again (new series, a new y axis
  // width) keeps it: made again, uPlot starts from the data's ends.
  const zoomRange = useRef<{ min: number; max: number } | null>(null);
  const [isZoomed, setZoomed] = useState(false);
  const data = useMemo(() => alignSeries(series, gapMs), [series, gapMs]);
  const has = series.some((s) => s.points.length > 0);
  // The latest props for uPlot's callbacks, which are made once per chart.
  const props = useRef({ yFormat, minSpan, until, onZoom, onResetZoom });
  props.current = { yFormat, minSpan, until, onZoom, onResetZoom };
  const shape = series.map((s) => `${s.name}:${s.color}:${s.dash ?? ""}`).join("|");
  // The legend's name of the x values (uPlot says "Time" unless told).
  const timeText = t("charts.time");

  useEffect(() => {
    const target = box.current;
    if (!target || !has) return undefined;
    const keep = zoomed.current ? zoomRange.current : null;
    const opts: uPlot.Options = {
      width: target.clientWidth || 640,
      height,
      scales: {
        x: {
          time: true,
          range: (u, min, max) => {
            if (zoomed.current && min != null && max != null) return [min, max];
            // Not zoomed: the data's own ends, widened to the minimum span and
            // to `until`. (uPlot widens a single sample to 1,000 days.)
            const xs = u.data[0];
            const first = xs[0] ?? min ?? Date.now() / 1000;
            const last = xs[xs.length - 1] ?? max ?? first;
            const end = Math.max(last, (props.current.until ?? 0) / 1000);
            return [Math.min(first, end - props.current.minSpan / 1000), end];
          },
        },
        y: { range: (_u, _min, max) => [0, yMax ?? Math.max(1, max) * 1.1] },
      },
      axes: [
        {
          stroke: "#7b8694",
          grid: { stroke: "#eef1f5" },
          ticks: { show: false },
          // 24-hour times as the legend has them, with the day past a day's span
          values: (u, splits) => splits.map((t) => axisTime(t * 1000, (u.scales.x.max ?? 0) - (u.scales.x.min ?? 0) > 86_400)),
        },
        { stroke: "#7b8694", grid: { stroke: "#eef1f5" }, ticks: { show: false }, size: ySize, values: (_u, vals) => vals.map((v) => props.current.yFormat(v)) },
      ],
      series: [
        { label: timeText, value: (_u, t) => (t == null ? "" : timeLabel(t * 1000)) },
        ...series.map((s) => ({
          label: s.name,
          stroke: s.color,
          width: 2,
          ...(s.dash ? { dash: s.dash } : {}),
          spanGaps: false,
          // Dots where a series has few samples in view (uPlot's default hides
          // them on a busy x axis: a series just started would not show).
          points: { size: 4, show: sparse },
          value: (_u: uPlot, v: number | null) => (v == null ? "–" : props.current.yFormat(v)),
        })),
      ],
      cursor: { drag: { x: true, y: false, setScale: true } },
      hooks: {
        // The period shown, on the element (for people's tools and the browser tests).
        setScale: [
          (u, key) => {
            if (key !== "x") return;
            target.dataset.from = String(Math.round(u.scales.x.min ?? 0));
            target.dataset.to = String(Math.round(u.scales.x.max ?? 0));
            if (zoomed.current && u.scales.x.min != null && u.scales.x.max != null) {
              zoomRange.current = { min: u.scales.x.min, max: u.scales.x.max };
            }
          },
        ],
        setSelect: [
          (u) => {
            if (u.select.width > 0) {
              zoomed.current = true;
              setZoomed(true);
              const from = u.posToVal(u.select.left, "x");
              const to = u.posToVal(u.select.left + u.select.width, "x");
              if (Number.isFinite(from) && Number.isFinite(to) && to > from) {
                zoomRange.current = { min: from, max: to };
                props.current.onZoom?.(from * 1000, to * 1000);
              }
            }
          },
        ],
      },
    };
    const chart = new uPlot(opts, data, target);
    plot.current = chart;
    if (keep) chart.setScale("x", keep);
    // Double-click resets uPlot's zoom; let live data widen the axis again.
    const unzoom = () => {
      zoomed.current = false;
      zoomRange.current = null;
      setZoomed(false);
      props.current.onResetZoom?.();
    };
    chart.over.addEventListener("dblclick", unzoom);
    const resize = new ResizeObserver(() => chart.setSize({ width: target.clientWidth || 640, height }));
    resize.observe(target);
    return () => {
      resize.disconnect();
      chart.over.removeEventListener("dblclick", unzoom);
      chart.destroy();
      plot.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape, height, yMax, has, ySize, timeText]);

  useEffect(() => {
    plot.current?.setData(data, !zoomed.current);
  }, [data]);

  const reset = () => {
    zoomed.current = false;
    zoomRange.current = null;
    setZoomed(false);
    plot.current?.setData(data, true);
    onResetZoom?.();
  };

  if (!has) return <div className="empty">{empty ?? t("charts.noSamples")}</div>;
  return (
    <div className="line-chart" data-testid="line-chart">
      <div className="chart-hint muted">
        {isZoomed ? (
          <button className="btn small" onClick={reset} data-testid="chart-reset-zoom">
            {t("charts.resetZoom")}
          </button>
        ) : (
          t("charts.dragToZoom")
        )}
      </div>
      <div ref={box} data-testid="line-chart-plot" />
    </div>
  );
}

export interface StackRow {
  label: string;
  parts: { value: number; color: string; name: string }[];
  total: number;
  note?: string;
}

export function StackBars({ rows, format }: { rows: StackRow[]; format: (v: number) => string }) {
  const t = useT();
  if (!rows.length) return <div className="empty">{t("charts.nothingToShow")}</div>;
  return (
    <div className="stack-bars">
      {rows.map((r) => (
        <Row key={r.label} r={r} format={format} />
      ))}
    </div>
  );
}

function Row({ r, format }: { r: StackRow; format: (v: number) => string }) {
  return (
    <>
      <div className="ellipsis" title={r.label}>
        {r.label}
      </div>
      <div className="bar stacked">
        {r.parts.map((p) => (
          <div
            key={p.name}
            title={`${p.name}: ${format(p.value)}`}
            style={{ width: `${r.total > 0 ? (p.value / r.total) * 100 : 0}%`, background: p.color }}
          />
        ))}
      </div>
      <div className="muted nowrap small-text">
        {r.note}
      </div>
    </>
  );
}
