// Layout of the chips heat map: node blocks of chip cells, flowed into rows.
// Pure arithmetic so that hit-testing a mouse position is O(1) at 8,000 chips.

import type { NodeGroup } from "./chips";

export type HeatMode = "chip" | "node";

export interface HeatLayout {
  mode: HeatMode;
  cell: number;
  gap: number;
  /** chip cells per row inside a node block, and rows of them */
  blockCols: number;
  blockRows: number;
  blockW: number;
  blockH: number;
  /** label band above each block (0 when labels are hidden) */
  label: number;
  /** space between blocks */
  pad: number;
  perRow: number;
  rows: number;
  width: number;
  height: number;
}

/** Width of a node's block in node mode when names are shown (px). */
export const NODE_LABEL_WIDTH = 120;

export function cellSizeFor(count: number): number {
  if (count <= 32) return 34;
  if (count <= 64) return 26;
  if (count <= 256) return 18;
  if (count <= 1024) return 12;
  if (count <= 3000) return 9;
  return 7;
}

export function layoutHeatmap(groups: readonly NodeGroup[], width: number, mode: HeatMode): HeatLayout {
  const count = mode === "chip" ? groups.reduce((n, g) => n + g.chips.length, 0) : groups.length;
  const cell = cellSizeFor(count);
  const gap = cell >= 12 ? 2 : 1;
  const maxChips = mode === "chip" ? Math.max(1, ...groups.map((g) => g.chips.length)) : 1;
  const blockCols = Math.min(maxChips, 8);
  const blockRows = Math.ceil(maxChips / blockCols);
  // Names are drawn above each block while cells are large enough to read
  // them by (up to 256 cells); in node mode a block is then widened to carry
  // its node's name, else one cell per node and the name on hover.
  const labelled = cell >= 18;
  const blockW = mode === "chip" ? blockCols * (cell + gap) - gap : labelled ? Math.max(cell, NODE_LABEL_WIDTH) : cell;
  const blockH = blockRows * (cell + gap) - gap;
  const label = labelled ? 16 : 0;
  const pad = mode === "chip" ? (cell >= 18 ? 14 : cell >= 9 ? 6 : 4) : labelled ? 10 : gap;
  const usable = Math.max(blockW, width);
  const perRow = Math.max(1, Math.floor((usable + pad) / (blockW + pad)));
  const rows = Math.ceil(groups.length / perRow);
  const height = rows ? rows * (blockH + label + pad) - pad : 0;
  return { mode, cell, gap, blockCols, blockRows, blockW, blockH, label, pad, perRow, rows, width: usable, height };
}

/** Top-left corner of node block `i`. */
export function blockOrigin(layout: HeatLayout, i: number): [number, number] {
  const col = i % layout.perRow;
  const row = Math.floor(i / layout.perRow);
  return [col * (layout.blockW + layout.pad), row * (layout.blockH + layout.label + layout.pad) + layout.label];
}

/** Top-left corner of chip `j` inside its block. */
export function cellOrigin(layout: HeatLayout, i: number, j: number): [number, number] {
  const [bx, by] = blockOrigin(layout, i);
  return [bx + (j % layout.blockCols) * (layout.cell + layout.gap), by + Math.floor(j / layout.blockCols) * (layout.cell + layout.gap)];
}

/** Which node block and chip (index in the block; -1 in node mode) is under (x, y), if any. */
export function hitTest(layout: HeatLayout, groups: readonly NodeGroup[], x: number, y: number): { group: number; chip: number } | null {
  if (x < 0 || y < 0) return null;
  const col = Math.floor(x / (layout.blockW + layout.pad));
  const row = Math.floor(y / (layout.blockH + layout.label + layout.pad));
  if (col >= layout.perRow) return null;
  const i = row * layout.perRow + col;
  if (i >= groups.length) return null;
  const [bx, by] = blockOrigin(layout, i);
  const lx = x - bx;
  const ly = y - by;
  if (lx < 0 || ly < 0 || lx > layout.blockW || ly > layout.blockH) return null;
  if (layout.mode === "node") return lx <= layout.cell ? { group: i, chip: -1 } : null;
  const cx = Math.floor(lx / (layout.cell + layout.gap));
  const cy = Math.floor(ly / (layout.cell + layout.gap));
  const j = cy * layout.blockCols + cx;
  if (cx >= layout.blockCols || j >= groups[i].chips.length) return null;
  return { group: i, chip: j };
}

// --- colours --------------------------------------------------------------------

/** The colour of an idle cell (heatColor's for 0). */
export const IDLE_FILL = "#e7ebf0";
const STEPS = 256;
let palette: string[] | null = null;

/** "hsl(h s% l%)" as "#rrggbb" (h in degrees, s and l in percent). */
export function hslToHex(h: number, s: number, l: number): string {
  const sat = s / 100;
  const light = l / 100;
  const a = sat * Math.min(light, 1 - light);
  const channel = (n: number) => {
    const k = (n + h / 30) % 12;
    const v = light - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(v * 255)
      .toString(16)
      .padStart(2, "0");
  };
  return `#${channel(0)}${channel(8)}${channel(4)}`;
}

/**
 * lib/format's heatColor for a canvas: the same ramp in 256 steps, as
 * "#rrggbb" strings made once. A canvas parses a hex colour faster than an
 * hsl() one, and the heat map sets a fill per cell (8,000 of them) on every
 * draw; heatColor also built a new string per call.
 */
export function heatFill(fraction: number): string {
  if (!(fraction > 0)) return IDLE_FILL;
  if (palette === null) {
    palette = [IDLE_FILL];
    for (let k = 1; k <= STEPS; k++) {
      const f = k / STEPS;
      // heatColor's ramp: hue 140 (green) -> 45 (amber) -> 0 (red), darker as it fills
      const hue = f < 0.6 ? 140 - (f / 0.6) * 95 : 45 - ((f - 0.6) / 0.4) * 45;
      palette.push(hslToHex(Math.round(hue), 62, Math.round(58 - f * 12)));
    }
  }
  return palette[Math.max(1, Math.min(STEPS, Math.round(fraction * STEPS)))];
}
