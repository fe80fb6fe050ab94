import { afterEach, describe, expect, it } from "vitest";
import type { MetricsStatus, UsageHistory } from "../api/types";
import { ENGLISH, loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { chipUsage, slice } from "./usageSamples";
import {
  aicoreGap,
  bookedUsed,
  bookedUsedText,
  chipAicore,
  chipSortOptions,
  chipMemory,
  filterUsageChips,
  filterUsageSlices,
  flagView,
  healthView,
  historyCharts,
  historyUrl,
  hours,
  memoryGap,
  metricsBanner,
  money,
  monthLabel,
  monthOf,
  parsePeriod,
  periodError,
  periodQuery,
  priceInput,
  rangeWindow,
  reportUrl,
  sliceMemory,
  sortUsageChips,
  stepForWindow,
  utcText,
} from "./usage";

const metrics = (over: Partial<MetricsStatus> = {}): MetricsStatus => ({
  configured: true,
  available: true,
  reason: "",
  queried_at: "2026-05-10T12:00:00Z",
  ...over,
});

describe("booked and used bars", () => {
  it("gives booked and used as percent of the whole, clamped for drawing", () => {
    expect(bookedUsed(4, 2, 8)).toEqual({ booked: 50, used: 25, usedRaw: 25, over: false });
    expect(bookedUsed(4, 12, 8)).toEqual({ booked: 50, used: 100, usedRaw: 150, over: true });
    expect(bookedUsed(4, null, 8)).toEqual({ booked: 50, used: null, usedRaw: null, over: false });
    expect(bookedUsed(0, 0, 0)).toEqual({ booked: 0, used: 0, usedRaw: 0, over: false });
  });

  it("reads a chip's AICore (used already % of the chip) and HBM", () => {
    const c = chipUsage();
    expect(chipAicore(c)).toMatchObject({ booked: 50, used: 25 });
    const m = chipMemory(c);
    expect(m.booked).toBeCloseTo((12288 / 21527) * 100);
    expect(m.used).toBeCloseTo((3072 / 21527) * 100);
    // without metrics, used is unknown whatever the row says
    expect(chipAicore(c, false).used).toBeNull();
    expect(chipMemory(chipUsage({ memory_used_mb: null })).used).toBeNull();
  });

  it("measures a slice's HBM against what it booked", () => {
    expect(sliceMemory(slice())).toEqual({ booked: 100, used: 100, usedRaw: 150, over: true });
  });

  it("says booked and used in words, with — for unknown", () => {
    expect(bookedUsedText(bookedUsed(4, 2, 8))).toBe("50% booked · 25% used");
    expect(bookedUsedText(bookedUsed(4, null, 8))).toBe("50% booked · — used");
  });

  it("computes the gap booked minus used", () => {
    expect(aicoreGap(chipUsage())).toBe(25);
    expect(aicoreGap(chipUsage({ aicore_used_percent: null }))).toBeNull();
    expect(memoryGap(chipUsage({ memory_mb: 1000, memory_booked_mb: 500, memory_used_mb: 800 }))).toBeCloseTo(-30);
  });
});

describe("flags and health", () => {
  it("labels the contract's flags, and any other one by its name", () => {
    expect(flagView("health_mismatch")).toMatchObject({ label: "health mismatch", kind: "hot" });
    expect(flagView("idle_slices")).toMatchObject({ label: "idle slices", kind: "warn" });
    expect(flagView("over_memory")).toMatchObject({ label: "over memory", kind: "hot" });
    expect(flagView("idle")).toMatchObject({ label: "idle", kind: "warn" });
    expect(flagView("new_flag")).toMatchObject({ label: "new flag", kind: "info" });
  });

  it("shows hardware health against registration", () => {
    expect(healthView({ healthy: true, hardware_healthy: true }).label).toBe("healthy");
    expect(healthView({ healthy: false, hardware_healthy: false })).toMatchObject({ label: "unhealthy", kind: "hot" });
    expect(healthView({ healthy: true, hardware_healthy: false })).toMatchObject({ label: "hw unhealthy · reg healthy", kind: "hot" });
    expect(healthView({ healthy: true, hardware_healthy: null }).label).toBe("healthy · hw —");
  });

  it("says why used figures are missing", () => {
    expect(metricsBanner(metrics())).toBeNull();
    expect(metricsBanner(undefined)).toBeNull();
    expect(metricsBanner(metrics({ configured: false, available: false, reason: "PROMETHEUS_URL is not set" }))).toBe(
      "Set PROMETHEUS_URL to see what slices use; booked figures are shown.",
    );
    expect(metricsBanner(metrics({ available: false, reason: "Prometheus timed out after 5 s." }))).toBe(
      "Usage metrics are unavailable: Prometheus timed out after 5 s. Booked figures are shown; used figures show —.",
    );
  });
});

describe("chips and slices tables", () => {
  const a = chipUsage({ chip: 1, node: "b", aicore_used_percent: 10, flags: ["idle_slices"] });
  const b = chipUsage({ chip: 2, node: "a", index: 1, aicore_used_percent: 50 });
  const c = chipUsage({ chip: 3, node: "a", index: 0, aicore_used_percent: null });
  const d = chipUsage({ chip: 4, node: "c", aicore_booked: 8, aicore_used_percent: 50 });

  it("filters by node text and flagged only", () => {
    expect(filterUsageChips([a, b, c, d], { node: "A" }).map((x) => x.chip)).toEqual([2, 3]);
    expect(filterUsageChips([a, b, c, d], { flaggedOnly: true }).map((x) => x.chip)).toEqual([1]);
  });

  it("sorts by node, by used and by the gap, unknown last", () => {
    expect(sortUsageChips([a, b, c, d], "node").map((x) => x.chip)).toEqual([3, 2, 1, 4]);
    expect(sortUsageChips([a, b, c, d], "aicore_used").map((x) => x.chip)).toEqual([2, 4, 1, 3]);
    // gaps: a 50-10=40, b 50-50=0, d 100-50=50, c unknown
    expect(sortUsageChips([a, b, c, d], "aicore_gap").map((x) => x.chip)).toEqual([4, 1, 2, 3]);
    // without metrics nothing is measured: node order
    expect(sortUsageChips([a, b, c, d], "aicore_used", false).map((x) => x.chip)).toEqual([3, 2, 1, 4]);
  });

  it("searches slices by namespace, pod, queue, node and template", () => {
    const s = [slice({ slice: 1 }), slice({ slice: 2, namespace: "prod", pod_name: "web", queue: "gold", template: "vir04" })];
    expect(filterUsageSlices(s, "GOLD").map((x) => x.slice)).toEqual([2]);
    expect(filterUsageSlices(s, " vir0 ").map((x) => x.slice)).toEqual([1, 2]);
    expect(filterUsageSlices(s, "")).toBe(s);
  });
});

describe("history", () => {
  const now = Date.parse("2026-05-10T12:00:00Z");

  it("picks a round step for about 300 points, finer for a zoomed window", () => {
    expect(stepForWindow(now - 3600_000, now)).toBe(15);
    expect(stepForWindow(now - 6 * 3600_000, now)).toBe(120);
    expect(stepForWindow(now - 24 * 3600_000, now)).toBe(300);
    expect(stepForWindow(now - 7 * 86400_000, now)).toBe(3600);
    expect(stepForWindow(now - 10 * 60_000, now)).toBe(2);
    expect(stepForWindow(now - 30_000, now)).toBe(1);
    expect(stepForWindow(now, now)).toBe(1);
  });

  it("asks for a range ending now, or for the zoomed window", () => {
    expect(rangeWindow("6h", now)).toEqual({ start: now - 6 * 3600_000, end: now });
    expect(historyUrl("chips", 7, rangeWindow("1h", now))).toBe(
      "/api/usage/chips/7/history/?start=2026-05-10T11%3A00%3A00.000Z&end=2026-05-10T12%3A00%3A00.000Z&step=15",
    );
    expect(historyUrl("slices", 3, { start: now - 300_000, end: now })).toBe(
      "/api/usage/slices/3/history/?start=2026-05-10T11%3A55%3A00.000Z&end=2026-05-10T12%3A00%3A00.000Z&step=1",
    );
  });

  it("splits the answer into an AICore chart and an HBM chart, booked dashed", () => {
    const h: UsageHistory = {
      metrics: metrics(),
      start: "2026-05-10T11:00:00Z",
      end: "2026-05-10T12:00:00Z",
      step: 15,
      series: [
        { name: "aicore_used_percent", unit: "%", points: [[1778410800, 20]] },
        { name: "memory_used_mb", unit: "MB", points: [[1778410800, 1024]] },
        { name: "aicore_booked_percent", unit: "%", points: [[1778410800, 50]] },
        { name: "memory_booked_mb", unit: "MB", points: [[1778410800, 6144]] },
      ],
    };
    const charts = historyCharts(h);
    expect(charts.aicore.map((l) => [l.name, l.dashed])).toEqual([
      ["AICore used", false],
      ["AICore booked", true],
    ]);
    expect(charts.aicore[0].points).toEqual([{ t: 1778410800_000, v: 20 }]);
    expect(charts.memory.map((l) => l.name)).toEqual(["HBM used", "HBM booked"]);
    // used series missing (no Prometheus): booked alone
    expect(historyCharts({ ...h, series: h.series.filter((s) => !s.name.endsWith("used_percent")) }).aicore.map((l) => l.name)).toEqual([
      "AICore booked",
    ]);
  });
});

describe("periods and the report", () => {
  it("defaults to the current month and reads a custom range", () => {
    const may = new Date(Date.UTC(2026, 4, 10));
    expect(monthOf(may)).toBe("2026-05");
    expect(parsePeriod(new URLSearchParams(""), may)).toEqual({ kind: "month", month: "2026-05" });
    expect(parsePeriod(new URLSearchParams("month=2026-02"), may)).toEqual({ kind: "month", month: "2026-02" });
    expect(parsePeriod(new URLSearchParams("month=garbage"), may)).toEqual({ kind: "month", month: "2026-05" });
    expect(parsePeriod(new URLSearchParams("start=2026-05-01&end=2026-05-07"), may)).toEqual({ kind: "range", start: "2026-05-01", end: "2026-05-07" });
    expect(parsePeriod(new URLSearchParams("period=range"), may)).toEqual({ kind: "range", start: "", end: "" });
  });

  it("turns a period into the report's query: a month, or local days with the last one included", () => {
    expect(periodQuery({ kind: "month", month: "2026-05" })).toEqual({ month: "2026-05" });
    expect(periodQuery({ kind: "range", start: "2026-05-01", end: "2026-05-07" })).toEqual({
      start: "2026-05-01T00:00:00Z",
      end: "2026-05-08T00:00:00Z",
    });
    // across a month's and a year's end
    expect(periodQuery({ kind: "range", start: "2026-12-31", end: "2026-12-31" }).end).toBe("2027-01-01T00:00:00Z");
  });

  it("checks a period", () => {
    expect(periodError({ kind: "month", month: "2026-05" })).toBeNull();
    expect(periodError({ kind: "month", month: "2026-13" })).toBe("Pick a month.");
    expect(periodError({ kind: "range", start: "2026-05-01", end: "" })).toBe("Pick a start and an end day.");
    expect(periodError({ kind: "range", start: "2026-05-08", end: "2026-05-01" })).toBe("The end is before the start.");
    expect(periodError({ kind: "range", start: "2026-05-01", end: "2026-05-01" })).toBeNull();
  });

  it("builds the report's URL, and the CSV's with the same query", () => {
    expect(reportUrl(1, "queue", { kind: "month", month: "2026-05" })).toBe("/api/usage/report/?cluster=1&group_by=queue&month=2026-05");
    expect(reportUrl(1, "queue", { kind: "month", month: "2026-05" }, "csv")).toBe(
      "/api/usage/report/?cluster=1&group_by=queue&month=2026-05&format=csv",
    );
  });

  it("formats hours, money and months", () => {
    expect(hours(1234.56)).toBe("1,234.6");
    expect(hours(null)).toBe("—");
    expect(hours(0)).toBe("0.0");
    expect(hours(0.0257)).toBe("0.03");
    expect(money("1234.5", "CNY")).toBe("1,234.50 CNY");
    expect(money(null, "CNY")).toBe("—");
    expect(money("0.1250", "CNY", 4)).toBe("0.125 CNY");
    expect(monthLabel("2026-05")).toBe("May 2026");
    expect(utcText("2026-05-01T08:00:00+08:00")).toBe("2026-05-01 00:00 UTC");
  });

  it("reads a typed price as the API wants it", () => {
    expect(priceInput("12.5")).toBe("12.50");
    expect(priceInput(" 3 ")).toBe("3.00");
    expect(priceInput("0")).toBe("0.00");
    expect(priceInput("-1")).toBeNull();
    expect(priceInput("0.1234")).toBe("0.1234");
    expect(priceInput("1.23456")).toBeNull();
    expect(priceInput("abc")).toBeNull();
    expect(priceInput("")).toBeNull();
  });
});

describe("in Chinese", () => {
  afterEach(() => setCurrentI18n(makeI18n("en", ENGLISH)));

  it("says flags, health, banners, sorts, periods and months in the UI's language", async () => {
    setCurrentI18n(makeI18n("zh-CN", await loadMessages("zh-CN")));
    expect(bookedUsedText(bookedUsed(4, 2, 8))).toBe("已分配 50% · 已用 25%");
    expect(flagView("over_memory")).toMatchObject({ label: "显存超用", kind: "hot", title: "实际使用的显存超过了分配量" });
    expect(flagView("new_flag")).toMatchObject({ label: "new flag", kind: "info" });
    expect(healthView({ healthy: true, hardware_healthy: false })).toMatchObject({ label: "硬件不健康 · 注册健康", title: "硬件显示不健康，而 HAMi 注册为健康" });
    expect(healthView({ healthy: false, hardware_healthy: null }).label).toBe("不健康 · 硬件 —");
    expect(metricsBanner(metrics({ configured: false, available: false }))).toBe("设置 PROMETHEUS_URL 后可查看切片的实际用量；当前显示分配数据。");
    expect(metricsBanner(metrics({ available: false, reason: "Prometheus 超时。" }))).toBe("用量指标不可用：Prometheus 超时。当前显示分配数据，实际用量显示为 —。");
    expect(chipSortOptions().map((o) => o.label)).toEqual(["节点", "AI Core 已用", "AI Core 已分配 − 已用", "显存已用", "显存已分配 − 已用"]);
    expect(periodError({ kind: "range", start: "2026-05-08", end: "2026-05-01" })).toBe("结束日期早于开始日期。");
    expect(monthLabel("2026-05")).toBe("2026年5月");
    expect(hours(1234.56)).toBe("1,234.6");
    expect(money("1234.5", "CNY")).toBe("1,234.50 CNY");
  });
});
