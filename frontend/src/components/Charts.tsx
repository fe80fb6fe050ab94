// Small SVG charts drawn by hand: a time series with an axis and a hover line,
// and stacked horizontal bars. No chart library: a few hundred bytes each.

import { useMemo, useRef, useState } from "react";
import { splitAtGaps } from "../lib/series";

export interface Series {
  name: string;
  color: string;
  points: { t: number; v: number }[];
}

const PALETTE = ["#2f6fde", "#2aa198", "#8a63d2", "#d07a2b", "#c2477f", "#5c8a3a"];
export const seriesColor = (i: number) => PALETTE[i % PALETTE.length];

function timeLabel(t: number): string {
  const d = new Date(t);
  return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

export function LineChart({
  series,
  height = 180,
  yMax,
  yFormat = (v) => String(Math.round(v)),
  empty = "No samples yet.",
  minSpan = 10 * 60_000,
  until,
  gapMs = Infinity,
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
}) {
  const width = 640;
  const m = { l: 44, r: 12, t: 8, b: 22 };
  const ref = useRef<SVGSVGElement>(null);
  const [hoverT, setHoverT] = useState<number | null>(null);
  const all = series.flatMap((s) => s.points);
  const { t0, t1, vMax } = useMemo(() => {
    const ts = all.map((p) => p.t);
    const vs = all.map((p) => p.v);
    const end = Math.max(until ?? 0, ...ts);
    return {
      t0: Math.min(end - minSpan, ...ts),
      t1: end,
      vMax: yMax ?? Math.max(1, ...vs) * 1.1,
    };
  }, [all, yMax, until, minSpan]);
  if (!all.length) return <div className="empty">{empty}</div>;
  const span = Math.max(1, t1 - t0);
  const x = (t: number) => m.l + ((t - t0) / span) * (width - m.l - m.r);
  const y = (v: number) => m.t + (1 - v / vMax) * (height - m.t - m.b);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * vMax);
  const xticks = [0, 0.25, 0.5, 0.75, 1].map((f) => t0 + f * span);

  const onMove = (e: React.MouseEvent<SVGSVGElement>) => {
    const rect = ref.current?.getBoundingClientRect();
    if (!rect) return;
    const px = ((e.clientX - rect.left) / rect.width) * width;
    const t = t0 + ((px - m.l) / (width - m.l - m.r)) * span;
    setHoverT(Math.max(t0, Math.min(t1, t)));
  };
  const nearest = (s: Series) =>
    hoverT === null || !s.points.length
      ? null
      : s.points.reduce((best, p) => (Math.abs(p.t - hoverT) < Math.abs(best.t - hoverT) ? p : best), s.points[0]);

  return (
    <div>
      <div className="chart-legend">
        {series.map((s) => {
          const p = nearest(s) ?? s.points[s.points.length - 1];
          return (
            <span key={s.name}>
              <i style={{ background: s.color }} />
              {s.name} {p ? <b>{yFormat(p.v)}</b> : null}
            </span>
          );
        })}
        {hoverT !== null && <span className="muted">at {timeLabel(hoverT)}</span>}
      </div>
      <svg
        ref={ref}
        viewBox={`0 0 ${width} ${height}`}
        width="100%"
        height={height}
        preserveAspectRatio="none"
        onMouseMove={onMove}
        onMouseLeave={() => setHoverT(null)}
        style={{ display: "block" }}
      >
        {ticks.map((v) => (
          <g key={v}>
            <line x1={m.l} x2={width - m.r} y1={y(v)} y2={y(v)} stroke="#eef1f5" />
            <text x={m.l - 6} y={y(v) + 4} fontSize="10" textAnchor="end" fill="#7b8694">
              {yFormat(v)}
            </text>
          </g>
        ))}
        {xticks.map((t, i) => (
          <text key={t} x={x(t)} y={height - 6} fontSize="10" textAnchor={i === 0 ? "start" : i === xticks.length - 1 ? "end" : "middle"} fill="#7b8694">
            {timeLabel(t)}
          </text>
        ))}
        {series.flatMap((s) =>
          splitAtGaps(s.points, gapMs).map((run, i) =>
            run.length === 1 ? (
              <circle key={`${s.name}-${i}`} cx={x(run[0].t)} cy={y(run[0].v)} r={3} fill={s.color} />
            ) : (
              <polyline
                key={`${s.name}-${i}`}
                fill="none"
                stroke={s.color}
                strokeWidth={2}
                vectorEffect="non-scaling-stroke"
                points={run.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(" ")}
              />
            ),
          ),
        )}
        {hoverT !== null && <line x1={x(hoverT)} x2={x(hoverT)} y1={m.t} y2={height - m.b} stroke="#9aa5b1" strokeDasharray="3 3" />}
      </svg>
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
  if (!rows.length) return <div className="empty">Nothing to show.</div>;
  return (
    <div style={{ display: "grid", gridTemplateColumns: "110px minmax(0, 1fr) auto", gap: "8px 12px", alignItems: "center" }}>
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
      <div className="bar" style={{ display: "flex", height: 18 }}>
        {r.parts.map((p) => (
          <div
            key={p.name}
            title={`${p.name}: ${format(p.value)}`}
            style={{ width: `${r.total > 0 ? (p.value / r.total) * 100 : 0}%`, background: p.color, height: "100%" }}
          />
        ))}
      </div>
      <div className="muted nowrap" style={{ fontSize: 12 }}>
        {r.note}
      </div>
    </>
  );
}
