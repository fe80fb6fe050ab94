// The chips heat map: one canvas, one cell per chip (or per node), coloured
// green -> amber -> red by the chosen metric. Each state has its own look
// (STATE_DRAW; the legend on the chips page shows the same): unhealthy chips
// are dark with a cross, cordoned ones hatched, draining ones hatched amber,
// drained ones empty and hatched, isolated ones solid violet with a bar, and
// an isolation or restore waiting for its proof has a dashed violet frame.
// Hover shows the numbers, click opens the chip.
//
// The canvas is drawn whole, once per change of the chips, the metric, the
// selection or the width: scrolling it (or the page over it) only moves
// pixels the compositor already has. Its width is read before the first draw,
// so a page load draws it once, not at a guessed width and again at the real one.

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { fraction, totalsUsedTotal, type Chip, type Metric, type NodeGroup } from "../lib/chips";
import { STATE_LOOK } from "../lib/chipState";
import { blockOrigin, cellOrigin, heatFill, hitTest, IDLE_FILL, layoutHeatmap, type HeatMode } from "../lib/heatmap";
import { useT } from "../i18n/I18nProvider";
import { mb, pctText } from "../lib/format";

interface Props {
  groups: NodeGroup[];
  metric: Metric;
  mode: HeatMode;
  selectedId: number | null;
  version: number;
  onSelectChip: (chip: Chip) => void;
  onSelectNode: (node: string) => void;
  maxHeight?: number;
}

interface Hover {
  x: number;
  y: number;
  group: NodeGroup;
  chip: Chip | null;
}

export function Heatmap({ groups, metric, mode, selectedId, version, onSelectChip, onSelectNode, maxHeight = 460 }: Props) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(0);
  const [hover, setHover] = useState<Hover | null>(null);
  const t = useT();

  useLayoutEffect(() => {
    const el = wrapRef.current;
    if (!el) return undefined;
    // The content box's width now (a layout the first paint needs anyway), then as it changes.
    const style = getComputedStyle(el);
    const padding = (parseFloat(style.paddingLeft) || 0) + (parseFloat(style.paddingRight) || 0);
    setWidth(Math.max(200, Math.floor(el.clientWidth - padding)));
    if (typeof ResizeObserver === "undefined") return undefined;
    const ro = new ResizeObserver(([entry]) => setWidth(Math.max(200, Math.floor(entry.contentRect.width))));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const layout = useMemo(() => layoutHeatmap(groups, width, mode), [groups, width, mode]);

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || width === 0) return;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.ceil(layout.width * dpr);
    canvas.height = Math.ceil(Math.max(1, layout.height) * dpr);
    canvas.style.width = `${layout.width}px`;
    canvas.style.height = `${Math.max(1, layout.height)}px`;
    const ctx = canvas.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, layout.width, layout.height);
    const { cell } = layout;
    ctx.font = "11px system-ui, sans-serif"; // i18n-ignore: a CSS font
    ctx.textBaseline = "bottom";
    groups.forEach((g, i) => {
      if (layout.label) {
        const [bx, by] = blockOrigin(layout, i);
        ctx.fillStyle = "#4a5666";
        const text = g.node.length > 26 ? `…${g.node.slice(-25)}` : g.node;
        ctx.fillText(text, bx, by - 3, layout.blockW);
      }
      if (mode === "node") {
        const [x, y] = blockOrigin(layout, i);
        const [used, total] = totalsUsedTotal(g.totals, metric);
        ctx.fillStyle = heatFill(total > 0 ? used / total : 0);
        ctx.fillRect(x, y, cell, cell);
        if (layout.label) {
          // beside a named node's cell, its figure: no hover needed to read it
          ctx.fillStyle = "#4a5666";
          ctx.textBaseline = "middle";
          ctx.fillText(pctText(used, total), x + cell + 6, y + cell / 2, layout.blockW - cell - 6);
          ctx.textBaseline = "bottom";
        }
        if (g.totals.unhealthy) {
          // a dark corner: this node has unhealthy chips
          ctx.fillStyle = "#1d0908";
          ctx.beginPath();
          ctx.moveTo(x, y);
          ctx.lineTo(x + cell * 0.75, y);
          ctx.lineTo(x, y + cell * 0.75);
          ctx.closePath();
          ctx.fill();
        }
        return;
      }
      g.chips.forEach((c, j) => {
        const [x, y] = cellOrigin(layout, i, j);
        drawChip(ctx, c, x, y, cell, metric, c.id === selectedId);
      });
    });
  }, [groups, layout, metric, mode, selectedId, version, width]);

  const onMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const hit = hitTest(layout, groups, e.clientX - rect.left, e.clientY - rect.top);
    if (!hit) return setHover(null);
    const group = groups[hit.group];
    setHover({ x: e.clientX, y: e.clientY, group, chip: hit.chip >= 0 ? group.chips[hit.chip] : null });
  };

  const onClick = () => {
    if (!hover) return;
    if (hover.chip) onSelectChip(hover.chip);
    else onSelectNode(hover.group.node);
  };

  return (
    <div ref={wrapRef} className="heat-wrap" style={{ maxHeight }} data-testid="heatmap">
      {groups.length === 0 ? (
        <div className="empty">{t("charts.heatEmpty")}</div>
      ) : (
        <canvas
          ref={canvasRef}
          className="heat-canvas"
          onMouseMove={onMove}
          onMouseLeave={() => setHover(null)}
          onClick={onClick}
          role="img"
          aria-label={t("charts.heatAria", { metric })}
        />
      )}
      {hover && <HeatTooltip hover={hover} metric={metric} />}
    </div>
  );
}

/** How each state is drawn over (or instead of) the metric's colour. */
const STATE_DRAW = {
  hatch: "rgba(40,50,60,0.55)",
  draining: "#d28b12",
  drained: "#2457b3",
  isolated: "#4c3b7a",
  pending: "#7c3aed",
  sick: "#ff6b61",
} as const;

function hatch(ctx: CanvasRenderingContext2D, x: number, y: number, cell: number, colour: string) {
  ctx.strokeStyle = colour;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let k = -cell; k < cell; k += 4) {
    ctx.moveTo(x + Math.max(0, k), y + Math.max(0, -k));
    ctx.lineTo(x + Math.min(cell, cell + k), y + Math.min(cell, cell - k));
  }
  ctx.stroke();
}

function frame(ctx: CanvasRenderingContext2D, x: number, y: number, cell: number, colour: string, dashed: boolean) {
  ctx.strokeStyle = colour;
  ctx.lineWidth = cell >= 12 ? 2 : 1;
  if (dashed) ctx.setLineDash([3, 2]);
  ctx.strokeRect(x + 1, y + 1, cell - 2, cell - 2);
  ctx.setLineDash([]);
}

function cross(ctx: CanvasRenderingContext2D, x: number, y: number, cell: number) {
  ctx.strokeStyle = STATE_DRAW.sick;
  ctx.lineWidth = cell >= 12 ? 2 : 1;
  ctx.beginPath();
  ctx.moveTo(x + 2, y + 2);
  ctx.lineTo(x + cell - 2, y + cell - 2);
  ctx.moveTo(x + cell - 2, y + 2);
  ctx.lineTo(x + 2, y + cell - 2);
  ctx.stroke();
}

function drawChip(ctx: CanvasRenderingContext2D, c: Chip, x: number, y: number, cell: number, metric: Metric, selected: boolean) {
  const f = fraction(c, metric);
  let label = true;
  switch (c.state) {
    case "unhealthy":
      ctx.fillStyle = "#3a1614";
      ctx.fillRect(x, y, cell, cell);
      cross(ctx, x, y, cell);
      label = false;
      break;
    case "isolated":
      ctx.fillStyle = STATE_DRAW.isolated;
      ctx.fillRect(x, y, cell, cell);
      ctx.fillStyle = "#fff";
      ctx.fillRect(x + cell * 0.25, y + cell / 2 - 1, cell * 0.5, 2);
      label = false;
      break;
    case "drained":
      ctx.fillStyle = IDLE_FILL;
      ctx.fillRect(x, y, cell, cell);
      hatch(ctx, x, y, cell, STATE_DRAW.hatch);
      frame(ctx, x, y, cell, STATE_DRAW.drained, false);
      break;
    default:
      ctx.fillStyle = heatFill(f);
      ctx.fillRect(x, y, cell, cell);
      if (c.state === "cordoned") hatch(ctx, x, y, cell, STATE_DRAW.hatch);
      if (c.state === "draining") {
        hatch(ctx, x, y, cell, STATE_DRAW.draining);
        frame(ctx, x, y, cell, STATE_DRAW.draining, false);
      }
      if (c.state === "isolating" || c.state === "restoring") frame(ctx, x, y, cell, STATE_DRAW.pending, true);
  }
  if (!c.healthy && c.state !== "unhealthy") {
    // sick as well as drained, isolated...: a red corner
    ctx.fillStyle = STATE_DRAW.sick;
    ctx.beginPath();
    ctx.moveTo(x + cell, y);
    ctx.lineTo(x + cell, y + cell * 0.4);
    ctx.lineTo(x + cell * 0.6, y);
    ctx.closePath();
    ctx.fill();
  }
  if (label && cell >= 22) {
    ctx.fillStyle = c.state !== "drained" && f > 0.55 ? "#fff" : "#2b3440";
    ctx.font = "10px system-ui, sans-serif"; // i18n-ignore: a CSS font
    ctx.textBaseline = "middle";
    ctx.textAlign = "center";
    ctx.fillText(String(c.index), x + cell / 2, y + cell / 2 + 0.5);
    ctx.textAlign = "start";
    ctx.textBaseline = "bottom";
    ctx.font = "11px system-ui, sans-serif"; // i18n-ignore: a CSS font
  }
  if (selected) {
    ctx.strokeStyle = "#2f6fde";
    ctx.lineWidth = 2;
    ctx.strokeRect(x - 1, y - 1, cell + 2, cell + 2);
  }
}

function HeatTooltip({ hover, metric }: { hover: Hover; metric: Metric }) {
  const tr = useT();
  const style = { left: Math.min(hover.x + 14, window.innerWidth - 300), top: hover.y + 14 };
  const c = hover.chip;
  if (!c) {
    const t = hover.group.totals;
    return (
      <div className="tooltip" style={style}>
        <div className="t-title">{hover.group.node}</div>
        <div className="t-row"><span>{tr("charts.chips")}</span><span>{tr("charts.nodeChips", { chips: t.chips, unhealthy: t.unhealthy })}</span></div>
        <div className="t-row"><span>{tr("charts.memory")}</span><span>{mb(t.memUsed)} / {mb(t.mem)}</span></div>
        <div className="t-row"><span>{tr("charts.slots")}</span><span>{t.slotsUsed} / {t.slots}</span></div>
        <div className="t-row"><span>{tr("charts.metric", { metric: "aicore" })}</span><span>{t.coreUsed} / {t.core}</span></div>
        <div className="t-row"><span>{tr("charts.metric", { metric })}</span><span>{pctText(...totalsUsedTotal(t, metric))}</span></div>
      </div>
    );
  }
  return (
    <div className="tooltip" style={style}>
      <div className="t-title">
        {c.node} · {c.type} #{c.index}
      </div>
      <div className={c.state === "unhealthy" ? "t-bad" : c.state === "healthy" ? "t-ok" : "t-warn"} data-testid="tooltip-state">
        {STATE_LOOK[c.state].label}
        {!c.healthy && c.state !== "unhealthy" ? tr("charts.alsoUnhealthy") : ""}
      </div>
      <div className="t-row"><span>{tr("charts.memory")}</span><span>{mb(c.memUsed)} / {mb(c.mem)}</span></div>
      <div className="t-row"><span>{tr("charts.slots")}</span><span>{c.slotsUsed} / {c.slots}</span></div>
      <div className="t-row"><span>{tr("charts.metric", { metric: "aicore" })}</span><span>{c.coreUsed} / {c.core}</span></div>
      <div className="t-row"><span>{tr("charts.metric", { metric: "aicpu" })}</span><span>{c.cpuUsed} / {c.cpu}</span></div>
    </div>
  );
}
