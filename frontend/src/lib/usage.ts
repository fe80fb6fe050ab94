// Usage and cost (issue 18): what slices booked next to what they use (from
// Prometheus through /api/usage/), and what they cost (/api/usage/report/).
// Pure helpers of the Usage and Cost pages: bars, gaps, flags, sorting,
// periods as query strings, the step of a zoomed history window. Texts are
// the `usage` catalog's, in the UI's current language (i18n/intl).

import { qs } from "../api/client";
import type { ChipUsage, HistorySeries, MetricsStatus, ReportGroupBy, SliceUsage, UsageHistory } from "../api/types";
import { currentI18n, t } from "../i18n/intl";

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
  return t("usage.bookedUsed", { booked: percent(bar.booked), used: bar.usedRaw === null ? "—" : percent(bar.usedRaw) });
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

/** The flags this build knows (their words: usage.flag.<flag>, usage.flagTitle.<flag>). */
const FLAGS: Record<string, FlagView["kind"]> = {
  health_mismatch: "hot",
  idle_slices: "warn",
  over_memory: "hot",
  idle: "warn",
};

export function flagView(flag: string): FlagView {
  const kind = FLAGS[flag];
  // A flag of a newer server: its code, readable.
  if (!kind) return { label: flag.replace(/_/g, " "), kind: "info", title: flag };
  return { label: t(`usage.flag.${flag}`), kind, title: t(`usage.flagTitle.${flag}`) };
}

/** Registration (HAMi) against the hardware (the exporter). */
export function healthView(c: Pick<ChipUsage, "healthy" | "hardware_healthy">): FlagView {
  const reg = t(c.healthy ? "usage.healthy" : "usage.unhealthy");
  if (c.hardware_healthy === null) {
    return { label: t("usage.health.hwUnknown", { reg }), kind: c.healthy ? "" : "hot", title: t("usage.health.hwUnknownTitle", { reg }) };
  }
  const hw = t(c.hardware_healthy ? "usage.healthy" : "usage.unhealthy");
  if (c.hardware_healthy === c.healthy) {
    return { label: reg, kind: c.healthy ? "" : "hot", title: t("usage.health.agreeTitle", { reg, hw }) };
  }
  return { label: t("usage.health.mismatch", { reg, hw }), kind: "hot", title: t("usage.health.mismatchTitle", { reg, hw }) };
}

// --- the chips tab ----------------------------------------------------------------------

export type ChipSort = "node" | "aicore_used" | "aicore_gap" | "memory_used" | "memory_gap";

/** The chips tab's sorts; each one's words are usage.sort.<key>. */
export const CHIP_SORTS: ChipSort[] = ["node", "aicore_used", "aicore_gap", "memory_used", "memory_gap"];

/** The sorts as a select's options, in the UI's language. */
export function chipSortOptions(): { value: ChipSort; label: string }[] {
  return CHIP_SORTS.map((key) => ({ value: key, label: t(`usage.sort.${key}`) }));
}

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
  if (!metrics.configured) return t("usage.metrics.notConfigured");
  // The reason comes from the server, in the UI's language already.
  const why = metrics.reason.trim().replace(/[.。]$/, "");
  return why ? t("usage.metrics.unavailableWhy", { why }) : t("usage.metrics.unavailable");
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

/** The series this build draws: colour, dashed (their names: usage.line.<series>). */
const LINES: Record<string, [string, boolean]> = {
  aicore_used_percent: ["#2f6fde", false],
  aicore_booked_percent: ["#8a97a8", true],
  memory_used_mb: ["#2aa198", false],
  memory_booked_mb: ["#8a97a8", true],
};

function line(series: HistorySeries[], name: string): HistoryLine | null {
  const s = series.find((x) => x.name === name);
  if (!s) return null;
  const known = LINES[name];
  const [color, dashed] = known ?? ["#8a63d2", false];
  const label = known ? t(`usage.line.${name}`) : name;
  return { name: label, color, dashed, points: s.points.map(([at, v]) => ({ t: at * 1000, v })) };
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

/** "May 2026" ("2026年5月" in Chinese) */
export function monthLabel(month: string): string {
  if (!isMonth(month)) return month;
  const [y, m] = month.split("-").map(Number);
  return currentI18n().intl.formatDate(new Date(Date.UTC(y, m - 1, 15)), { month: "long", year: "numeric", timeZone: "UTC" });
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
  if (period.kind === "month") return isMonth(period.month) ? null : t("usage.period.pickMonth");
  if (!isDay(period.start) || !isDay(period.end)) return t("usage.period.pickDays");
  if (period.end < period.start) return t("usage.period.endBeforeStart");
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

/** The report's groupings (their words: the Cost page's cost.group.<key>). */
export const GROUPS: ReportGroupBy[] = ["namespace", "queue", "chip_type"];

export function isGroupBy(value: string): value is ReportGroupBy {
  return (GROUPS as string[]).includes(value);
}

export function reportUrl(clusterId: number, groupBy: ReportGroupBy, period: Period, format?: "csv"): string {
  return `/api/usage/report/${qs({ cluster: clusterId, group_by: groupBy, ...periodQuery(period), format })}`;
}

/** Hours with one decimal ("1,234.5"), two under an hour ("0.03"), or "—". */
export function hours(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  const places = value !== 0 && Math.abs(value) < 1 ? 2 : 1;
  return currentI18n().intl.formatNumber(value, { minimumFractionDigits: places, maximumFractionDigits: places });
}

/**
 * A decimal string of the API as money: "1234.5" CNY -> "1,234.50 CNY"; null -> "—".
 * `places`: at most this many decimals (prices per hour may have 4).
 */
export function money(value: string | null | undefined, currency: string, places = 2): string {
  if (value === null || value === undefined || value === "") return "—";
  const n = Number(value);
  if (!Number.isFinite(n)) return `${value} ${currency}`.trim();
  const amount = currentI18n().intl.formatNumber(n, { minimumFractionDigits: 2, maximumFractionDigits: Math.max(2, places) });
  return `${amount} ${currency}`.trim();
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
