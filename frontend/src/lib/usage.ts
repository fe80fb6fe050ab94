// Usage and cost (issue 18): what slices booked next to what they use (from
// Prometheus through /api/usage/), and what they cost (/api/usage/report/).
// Pure helpers of the Usage and Cost pages: bars, gaps, flags, sorting,
// periods as query strings, the step of a zoomed history window.

import { qs } from "../api/client";
import type { ChipUsage, HistorySeries, MetricsStatus, ReportGroupBy, SliceUsage, UsageHistory } from "../api/types";

// --- bars ------------------------------------------------------------------------------

/** A two-layer bar: how much of a whole is booked, and how much is used (percent, 0..100 for drawing). */
export interface BookedUsed {
  /** booked, % of the whole, clamped to 0..100 */
  booked: number;
  /** used, % of the whole, clamped to 0..100; null when not known */
  used: number | null;
  /** used as measured, % of the whole, not clamped (a hog can pass 100) */
  usedRaw: number | null;
  /** used is above what was booked */
  over: boolean;
}

const clamp = (v: number) => Math.max(0, Math.min(100, v));

/** `booked` and `used` out of `total` (same unit); `used` null when not measured. */
export function bookedUsed(booked: number, used: number | null | undefined, total: number): BookedUsed {
  const b = total > 0 ? (booked / total) * 100 : 0;
  if (used === null || used === undefined || !Number.isFinite(used)) return { booked: clamp(b), used: null, usedRaw: null, over: false };
  const u = total > 0 ? (used / total) * 100 : 0;
  return { booked: clamp(b), used: clamp(u), usedRaw: u, over: used > booked };
}

/** A chip's AICores: booked by its slices, used as the exporter measures (already % of the chip). */
export function chipAicore(c: ChipUsage, metricsOk = true): BookedUsed {
  const used = metricsOk && c.aicore_used_percent !== null ? (c.aicore_used_percent / 100) * c.aicore : null;
  return bookedUsed(c.aicore_booked, used, c.aicore);
}

/** A chip's HBM: booked by its slices, used as the exporter measures. */
export function chipMemory(c: ChipUsage, metricsOk = true): BookedUsed {
  return bookedUsed(c.memory_booked_mb, metricsOk ? c.memory_used_mb : null, c.memory_mb);
}

/** A slice's HBM used against what it booked (a hog passes 100 %). */
export function sliceMemory(s: SliceUsage, metricsOk = true): BookedUsed {
  return bookedUsed(s.memory_mb, metricsOk ? s.memory_used_mb : null, s.memory_mb);
}

/** Percent with no decimals, or "—" when unknown. */
export function percent(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  return `${Math.round(value)}%`;
}

/** The text on a two-layer bar: "booked 50% · used 12%". */
export function bookedUsedText(bar: BookedUsed): string {
  return `${percent(bar.booked)} booked · ${bar.usedRaw === null ? "—" : percent(bar.usedRaw)} used`;
}

/** Booked minus used, in points of the chip's AICores (null when use is not known). */
export function aicoreGap(c: ChipUsage, metricsOk = true): number | null {
  const bar = chipAicore(c, metricsOk);
  return bar.usedRaw === null ? null : bar.booked - bar.usedRaw;
}

/** Booked minus used, in points of the chip's HBM. */
export function memoryGap(c: ChipUsage, metricsOk = true): number | null {
  const bar = chipMemory(c, metricsOk);
  return bar.usedRaw === null ? null : bar.booked - bar.usedRaw;
}

// --- flags and health -------------------------------------------------------------------

export interface FlagView {
  label: string;
  kind: "hot" | "warn" | "info" | "";
  title: string;
}

const FLAGS: Record<string, FlagView> = {
  health_mismatch: {
    label: "health mismatch",
    kind: "hot",
    title: "the hardware (npu-exporter) and HAMi's registration disagree on this chip's health",
  },
  idle_slices: { label: "idle slices", kind: "warn", title: "slices on this chip have used no AICore for a while" },
  over_memory: { label: "over memory", kind: "hot", title: "HBM in use is above what was booked" },
  idle: { label: "idle", kind: "warn", title: "this slice has used no AICore for a while" },
};

export function flagView(flag: string): FlagView {
  return FLAGS[flag] ?? { label: flag.replace(/_/g, " "), kind: "info", title: flag };
}

/** Registration (HAMi) against the hardware (the exporter). */
export function healthView(c: Pick<ChipUsage, "healthy" | "hardware_healthy">): FlagView {
  const reg = c.healthy ? "healthy" : "unhealthy";
  if (c.hardware_healthy === null) {
    return { label: `${reg} · hw —`, kind: c.healthy ? "" : "hot", title: `registered ${reg}; the hardware's health is not known` };
  }
  const hw = c.hardware_healthy ? "healthy" : "unhealthy";
  if (c.hardware_healthy === c.healthy) {
    return { label: reg, kind: c.healthy ? "" : "hot", title: `registered ${reg}, hardware ${hw}` };
  }
  return { label: `hw ${hw} · reg ${reg}`, kind: "hot", title: `the hardware says ${hw} while HAMi registers it ${reg}` };
}

// --- the chips tab ----------------------------------------------------------------------

export type ChipSort = "node" | "aicore_used" | "aicore_gap" | "memory_used" | "memory_gap";

export const CHIP_SORTS: { key: ChipSort; label: string }[] = [
  { key: "node", label: "Node" },
  { key: "aicore_used", label: "AICore used" },
  { key: "aicore_gap", label: "AICore booked − used" },
  { key: "memory_used", label: "HBM used" },
  { key: "memory_gap", label: "HBM booked − used" },
];

export function filterUsageChips(chips: ChipUsage[], { node = "", flaggedOnly = false }: { node?: string; flaggedOnly?: boolean }): ChipUsage[] {
  const needle = node.trim().toLowerCase();
  return chips.filter((c) => (!flaggedOnly || c.flags.length > 0) && (!needle || c.node.toLowerCase().includes(needle)));
}

const byNode = (a: ChipUsage, b: ChipUsage) => (a.node < b.node ? -1 : a.node > b.node ? 1 : a.index - b.index);

/** Sort a copy: by node, or by a measure largest first (unknown last, then by node). */
export function sortUsageChips(chips: ChipUsage[], key: ChipSort, metricsOk = true): ChipUsage[] {
  if (key === "node") return [...chips].sort(byNode);
  const measure = (c: ChipUsage): number | null => {
    switch (key) {
      case "aicore_used":
        return chipAicore(c, metricsOk).usedRaw;
      case "memory_used":
        return chipMemory(c, metricsOk).usedRaw;
      case "aicore_gap":
        return aicoreGap(c, metricsOk);
      case "memory_gap":
        return memoryGap(c, metricsOk);
    }
  };
  const values = new Map(chips.map((c) => [c.chip, measure(c)]));
  return [...chips].sort((a, b) => {
    const va = values.get(a.chip) ?? null;
    const vb = values.get(b.chip) ?? null;
    if (va === null && vb === null) return byNode(a, b);
    if (va === null) return 1;
    if (vb === null) return -1;
    return vb - va || byNode(a, b);
  });
}

export function filterUsageSlices(slices: SliceUsage[], text: string): SliceUsage[] {
  const needle = text.trim().toLowerCase();
  if (!needle) return slices;
  return slices.filter((s) =>
    [s.namespace, s.pod_name, s.queue, s.node, s.template, s.common_word].some((v) => (v ?? "").toLowerCase().includes(needle)),
  );
}

/** What the banner says when the portal cannot see what slices use (null: it can). */
export function metricsBanner(metrics: MetricsStatus | undefined): string | null {
  if (!metrics || metrics.available) return null;
  if (!metrics.configured) return "Set PROMETHEUS_URL to see what slices use; booked figures are shown.";
  const why = metrics.reason.trim().replace(/\.$/, "");
  return `Usage metrics are unavailable${why ? `: ${why}` : ""}. Booked figures are shown; used figures show —.`;
}

// --- history ----------------------------------------------------------------------------

export type HistoryRange = "1h" | "6h" | "24h" | "7d";

export const HISTORY_RANGES: { key: HistoryRange; label: string; seconds: number }[] = [
  { key: "1h", label: "1h", seconds: 3600 },
  { key: "6h", label: "6h", seconds: 6 * 3600 },
  { key: "24h", label: "24h", seconds: 24 * 3600 },
  { key: "7d", label: "7d", seconds: 7 * 24 * 3600 },
];

export function isHistoryRange(value: string): value is HistoryRange {
  return HISTORY_RANGES.some((r) => r.key === value);
}

export interface TimeWindow {
  /** ms since the epoch */
  start: number;
  end: number;
}

/** The last `range` up to `now` (ms). */
export function rangeWindow(range: HistoryRange, now: number): TimeWindow {
  const seconds = HISTORY_RANGES.find((r) => r.key === range)?.seconds ?? 3600;
  return { start: now - seconds * 1000, end: now };
}

const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

/**
 * Seconds between samples for a window of `startMs`..`endMs`, about `points`
 * of them: the smallest round step that gives no more (a zoom into a few
 * minutes asks for a finer step than the hour around it).
 */
export function stepForWindow(startMs: number, endMs: number, points = 300): number {
  const span = Math.max(0, endMs - startMs) / 1000;
  const wanted = span / Math.max(1, points);
  return STEPS.find((s) => s >= wanted) ?? Math.ceil(wanted / 86400) * 86400;
}

export type UsageKind = "chips" | "slices";

export function historyUrl(kind: UsageKind, id: number, window: TimeWindow): string {
  return `/api/usage/${kind}/${id}/history/${qs({
    start: new Date(window.start).toISOString(),
    end: new Date(window.end).toISOString(),
    step: stepForWindow(window.start, window.end),
  })}`;
}

export interface ChartPoint {
  t: number;
  v: number;
}

export interface HistoryLine {
  name: string;
  color: string;
  dashed: boolean;
  points: ChartPoint[];
}

const LABELS: Record<string, [string, string, boolean]> = {
  aicore_used_percent: ["AICore used", "#2f6fde", false],
  aicore_booked_percent: ["AICore booked", "#8a97a8", true],
  memory_used_mb: ["HBM used", "#2aa198", false],
  memory_booked_mb: ["HBM booked", "#8a97a8", true],
};

function line(series: HistorySeries[], name: string): HistoryLine | null {
  const s = series.find((x) => x.name === name);
  if (!s) return null;
  const [label, color, dashed] = LABELS[name] ?? [name, "#8a63d2", false];
  return { name: label, color, dashed, points: s.points.map(([t, v]) => ({ t: t * 1000, v })) };
}

/** The history answer as two charts: AICore % (used vs booked) and HBM MB (used vs booked). */
export function historyCharts(h: UsageHistory): { aicore: HistoryLine[]; memory: HistoryLine[] } {
  const pick = (names: string[]) => names.map((n) => line(h.series, n)).filter((l): l is HistoryLine => l !== null);
  return {
    aicore: pick(["aicore_used_percent", "aicore_booked_percent"]),
    memory: pick(["memory_used_mb", "memory_booked_mb"]),
  };
}

// --- cost -------------------------------------------------------------------------------
// Periods are in UTC, as the API reads `month=` (a bill's month is the same
// month wherever it is read).

export type Period = { kind: "month"; month: string } | { kind: "range"; start: string; end: string };

const pad = (n: number) => String(n).padStart(2, "0");

/** "YYYY-MM" of a date (UTC). */
export function monthOf(date: Date): string {
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}`;
}

export function isMonth(value: string): boolean {
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(value);
}

export function isDay(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value));
}

/** "May 2026" */
export function monthLabel(month: string): string {
  if (!isMonth(month)) return month;
  const [y, m] = month.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, 15)).toLocaleString("en-US", { month: "long", year: "numeric", timeZone: "UTC" });
}

/** Midnight UTC of a "YYYY-MM-DD", `days` later: "2026-05-08T00:00:00Z". */
function midnightUtc(day: string, days = 0): string {
  const [y, m, d] = day.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().replace(".000Z", "Z");
}

/**
 * The period as the report's query: `month=YYYY-MM`, or a custom range from
 * the first day's midnight to the end of the last day (both days included, UTC).
 */
export function periodQuery(period: Period): Record<string, string> {
  if (period.kind === "month") return { month: period.month };
  return { start: midnightUtc(period.start), end: midnightUtc(period.end, 1) };
}

/** An API time as UTC: "2026-05-01 00:00 UTC". */
export function utcText(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** What is wrong with a period (null: nothing). */
export function periodError(period: Period): string | null {
  if (period.kind === "month") return isMonth(period.month) ? null : "Pick a month.";
  if (!isDay(period.start) || !isDay(period.end)) return "Pick a start and an end day.";
  if (period.end < period.start) return "The end is before the start.";
  return null;
}

/** The period from the page's query string (a custom range wins when both days are set). */
export function parsePeriod(search: URLSearchParams, now: Date = new Date()): Period {
  const start = search.get("start") ?? "";
  const end = search.get("end") ?? "";
  if (search.get("period") === "range" || (start && end)) return { kind: "range", start, end };
  const month = search.get("month") ?? "";
  return { kind: "month", month: isMonth(month) ? month : monthOf(now) };
}

export const GROUPS: { key: ReportGroupBy; label: string }[] = [
  { key: "namespace", label: "Namespace" },
  { key: "queue", label: "Queue" },
  { key: "chip_type", label: "Chip type" },
];

export function isGroupBy(value: string): value is ReportGroupBy {
  return GROUPS.some((g) => g.key === value);
}

export function reportUrl(clusterId: number, groupBy: ReportGroupBy, period: Period, format?: "csv"): string {
  return `/api/usage/report/${qs({ cluster: clusterId, group_by: groupBy, ...periodQuery(period), format })}`;
}

/** Hours with one decimal ("1,234.5"), two under an hour ("0.03"), or "—". */
export function hours(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  const places = value !== 0 && Math.abs(value) < 1 ? 2 : 1;
  return value.toLocaleString("en-US", { minimumFractionDigits: places, maximumFractionDigits: places });
}

/**
 * A decimal string of the API as money: "1234.5" CNY -> "1,234.50 CNY"; null -> "—".
 * `places`: at most this many decimals (prices per hour may have 4).
 */
export function money(value: string | null | undefined, currency: string, places = 2): string {
  if (value === null || value === undefined || value === "") return "—";
  const n = Number(value);
  if (!Number.isFinite(n)) return `${value} ${currency}`.trim();
  return `${n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: Math.max(2, places) })} ${currency}`.trim();
}

/**
 * A price as typed, as the API wants it: a non-negative decimal with at most 4
 * places, at least 2 ("12.5" -> "12.50", "0.1234" kept); null when invalid.
 */
export function priceInput(text: string): string | null {
  const t = text.trim();
  const m = /^\d+(?:\.(\d{0,4}))?$/.exec(t);
  if (!m) return null;
  return Number(t).toFixed(Math.max(2, (m[1] ?? "").length));
}
