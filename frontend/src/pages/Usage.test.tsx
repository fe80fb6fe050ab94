import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import type { ChipUsage, MetricsStatus, SliceUsage, UsageHistory, UsageList } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { chipUsage, slice as sampleSlice } from "../lib/usageSamples";
import { renderAs, stubFetch } from "./testing";
import { UsagePage } from "./Usage";

// uPlot draws on a canvas happy-dom does not have: a stand-in chart that shows
// its series and lets the test "drag" across it.
vi.mock("../components/Charts", () => ({
  LineChart: ({ series, onZoom }: { series: { name: string }[]; onZoom?: (from: number, to: number) => void }) => (
    <div data-testid="line-chart">
      {series.map((s) => s.name).join(",")}
      <button data-testid="fake-zoom" onClick={() => onZoom?.(Date.parse("2026-05-10T11:50:00Z"), Date.parse("2026-05-10T11:55:00Z"))}>
        zoom
      </button>
    </div>
  ),
}));

const on: MetricsStatus = { configured: true, available: true, reason: "", queried_at: "2026-05-10T12:00:00Z" };
const off: MetricsStatus = { configured: false, available: false, reason: "PROMETHEUS_URL is not set", queried_at: "2026-05-10T12:00:00Z" };

const chip = (over: Partial<ChipUsage> = {}): ChipUsage => chipUsage(over);
const slice = (over: Partial<SliceUsage> = {}): SliceUsage =>
  sampleSlice({ slice: 11, aicore_used_percent: 0, memory_used_mb: 307, idle_seconds: 5400, flags: ["idle"], ...over });

const list = <T,>(metrics: MetricsStatus, results: T[]): UsageList<T> => ({ metrics, results });

const history: UsageHistory = {
  metrics: on,
  start: "2026-05-10T11:00:00Z",
  end: "2026-05-10T12:00:00Z",
  step: 15,
  series: [
    { name: "aicore_used_percent", unit: "%", points: [[1778410800, 20]] },
    { name: "aicore_booked_percent", unit: "%", points: [[1778410800, 50]] },
    { name: "memory_used_mb", unit: "MB", points: [[1778410800, 1024]] },
    { name: "memory_booked_mb", unit: "MB", points: [[1778410800, 6144]] },
  ],
};

function serve(chips: UsageList<ChipUsage>, slices: UsageList<SliceUsage> = list(on, [])) {
  return stubFetch((url) => {
    if (url.includes("/history/")) return { body: history };
    if (url.startsWith("/api/usage/chips/")) return { body: chips };
    if (url.startsWith("/api/usage/slices/")) return { body: slices };
    return undefined;
  });
}

const urls = (fetch: ReturnType<typeof serve>) => fetch.mock.calls.map((c) => (c as unknown as [string])[0]);

beforeEach(() => window.history.replaceState(null, "", "/usage"));
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("UsagePage, chips", () => {
  it("says to set PROMETHEUS_URL when metrics are not configured, and keeps the booked figures", async () => {
    const fetch = serve(list(off, [chip({ aicore_used_percent: null, memory_used_mb: null, hardware_healthy: null })]));
    renderAs("viewer", <UsagePage />);
    const banner = await screen.findByTestId("metrics-banner");
    expect(banner.textContent).toContain("Set PROMETHEUS_URL to see what slices use; booked figures are shown");
    expect(urls(fetch)[0]).toBe("/api/usage/chips/?cluster=1");
    const row = screen.getByTestId("usage-chip-row");
    const aicore = within(row).getByTestId("aicore-bar");
    expect(aicore.textContent).toBe("50% booked · — used");
    expect(aicore.dataset.booked).toBe("50.0");
    expect(aicore.dataset.used).toBe("");
    expect(within(row).getByTestId("memory-bar").textContent).toBe("57% booked · — used");
  });

  it("shows the reason when Prometheus is configured but does not answer", async () => {
    serve(list({ ...on, available: false, reason: "Prometheus did not answer within 5 s" }, [chip({ aicore_used_percent: null })]));
    renderAs("viewer", <UsagePage />);
    expect((await screen.findByTestId("metrics-banner")).textContent).toContain(
      "Usage metrics are unavailable: Prometheus did not answer within 5 s.",
    );
  });

  it("shows no banner when metrics are there, and a flagged chip's badges", async () => {
    serve(
      list(on, [
        chip({ chip: 1, node: "node-a" }),
        chip({ chip: 2, node: "node-b", hardware_healthy: false, flags: ["health_mismatch", "idle_slices"], aicore_used_percent: 0 }),
      ]),
    );
    renderAs("viewer", <UsagePage />);
    const rows = await screen.findAllByTestId("usage-chip-row");
    expect(screen.queryByTestId("metrics-banner")).toBeNull();
    expect(within(rows[0]).getByTestId("aicore-bar").textContent).toBe("50% booked · 25% used");
    const flagged = rows[1];
    expect(within(flagged).getByText("health mismatch").className).toContain("hot");
    expect(within(flagged).getByText("idle slices").className).toContain("warn");
    expect(within(flagged).getByText("hw unhealthy · reg healthy")).toBeTruthy();
    expect(screen.getByTestId("usage-chip-count").textContent).toBe("2 of 2 chips · 1 flagged");

    fireEvent.click(screen.getByTestId("flagged-only"));
    await waitFor(() => expect(screen.getAllByTestId("usage-chip-row")).toHaveLength(1));
    expect(screen.getByTestId("usage-chip-row").dataset.chipId).toBe("2");
    expect(window.location.search).toBe("?flagged=1");
  });

  it("sorts by the gap between booked and used", async () => {
    serve(
      list(on, [
        chip({ chip: 1, node: "a", aicore_used_percent: 45 }), // gap 5
        chip({ chip: 2, node: "b", aicore_used_percent: 0 }), // gap 50
        chip({ chip: 3, node: "c", aicore_used_percent: 20 }), // gap 30
      ]),
    );
    renderAs("viewer", <UsagePage />);
    await screen.findAllByTestId("usage-chip-row");
    fireEvent.change(screen.getByTestId("usage-sort"), { target: { value: "aicore_gap" } });
    await waitFor(() => expect(screen.getAllByTestId("usage-chip-row").map((r) => r.dataset.chipId)).toEqual(["2", "3", "1"]));
  });

  it("opens a chip's history, and fetches a zoomed window again at a finer step", async () => {
    const fetch = serve(list(on, [chip({ chip: 7 })]));
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse("2026-05-10T12:00:00Z"));
    try {
      renderAs("viewer", <UsagePage />);
      fireEvent.click(await screen.findByTestId("usage-chip-row"));
      const charts = await screen.findAllByTestId("line-chart");
      expect(charts.map((c) => c.textContent)).toEqual(["AICore used,AICore bookedzoom", "HBM used,HBM bookedzoom"]);
      expect(urls(fetch)).toContain(
        "/api/usage/chips/7/history/?start=2026-05-10T11%3A00%3A00.000Z&end=2026-05-10T12%3A00%3A00.000Z&step=15",
      );
      fireEvent.click(screen.getAllByTestId("fake-zoom")[0]);
      await waitFor(() =>
        expect(urls(fetch)).toContain(
          "/api/usage/chips/7/history/?start=2026-05-10T11%3A50%3A00.000Z&end=2026-05-10T11%3A55%3A00.000Z&step=1",
        ),
      );
      expect(screen.getByTestId("history-window").textContent).toContain("Zoomed to");
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("UsagePage, slices", () => {
  it("lists slices with use against booking and asks the API for a flag", async () => {
    window.history.replaceState(null, "", "/usage?tab=slices");
    const fetch = serve(list(on, []), list(on, [slice(), slice({ slice: 12, pod_name: "hog", flags: ["over_memory"], memory_used_mb: 9216, idle_seconds: null, aicore_used_percent: 50 })]));
    renderAs("viewer", <UsagePage />);
    const rows = await screen.findAllByTestId("usage-slice-row");
    expect(rows[0].textContent).toContain("1h 30m");
    expect(within(rows[0]).getByText("idle")).toBeTruthy();
    expect(rows[1].textContent).toContain("9 GiB / 6 GiB");
    expect(within(rows[1]).getByText("over memory")).toBeTruthy();
    fireEvent.change(screen.getByTestId("usage-flag-filter"), { target: { value: "idle" } });
    await waitFor(() => expect(urls(fetch)).toContain("/api/usage/slices/?cluster=1&flag=idle"));
  });

  it("shows — for used columns when metrics are unavailable", async () => {
    window.history.replaceState(null, "", "/usage?tab=slices");
    serve(list(off, []), list(off, [slice({ aicore_used_percent: null, memory_used_mb: null, idle_seconds: null, flags: [] })]));
    renderAs("viewer", <UsagePage />);
    const row = await screen.findByTestId("usage-slice-row");
    expect(screen.getByTestId("metrics-banner")).toBeTruthy();
    expect(row.textContent).toContain("— of 2 cores");
    expect(row.textContent).toContain("— / 6 GiB");
  });
});

describe("UsagePage in Chinese", () => {
  it("reads the chips tab in Chinese, names and units as they are", async () => {
    serve(
      list({ ...on, available: false, reason: "Prometheus 未在 5 秒内应答" }, [
        chip({ chip: 1, node: "node-a" }),
        chip({ chip: 2, node: "node-b", hardware_healthy: false, flags: ["health_mismatch", "idle_slices"], aicore_used_percent: 0 }),
      ]),
    );
    renderAs(
      "viewer",
      <I18nProvider locale="zh-CN">
        <UsagePage />
      </I18nProvider>,
    );
    const rows = await screen.findAllByTestId("usage-chip-row");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("用量");
    expect(screen.getByTestId("metrics-banner").textContent).toBe("用量指标不可用：Prometheus 未在 5 秒内应答。当前显示分配数据，实际用量显示为 —。");
    expect(within(rows[0]).getByTestId("aicore-bar").textContent).toBe("已分配 50% · 已用 —");
    expect(within(rows[1]).getByText("健康状况不一致").className).toContain("hot");
    expect(within(rows[1]).getByText("有空闲切片")).toBeTruthy();
    expect(within(rows[1]).getByText("硬件不健康 · 注册健康")).toBeTruthy();
    expect(screen.getByTestId("usage-chip-count").textContent).toBe("2 / 2 个芯片 · 1 个有标记");
    expect((screen.getByTestId("usage-sort") as HTMLSelectElement).selectedOptions[0].textContent).toBe("节点");
    const text = document.body.textContent ?? "";
    for (const english of ["booked", "used", "Flags", "Refresh", "health mismatch", "Sort by"]) expect(text).not.toContain(english);
  });

  it("reads the slices tab and a slice's history in Chinese", async () => {
    window.history.replaceState(null, "", "/usage?tab=slices");
    serve(list(on, []), list(on, [slice({ template: "" })]));
    renderAs(
      "viewer",
      <I18nProvider locale="zh-CN">
        <UsagePage />
      </I18nProvider>,
    );
    const row = await screen.findByTestId("usage-slice-row");
    expect(row.textContent).toContain("1小时30分钟");
    expect(row.textContent).toContain("整卡");
    expect(within(row).getByText("空闲")).toBeTruthy();
    expect(screen.getByTestId("usage-slice-count").textContent).toBe("1 / 1 个切片");
    fireEvent.click(row);
    const charts = await screen.findAllByTestId("line-chart");
    expect(charts.map((c) => c.textContent)).toEqual(["AI Core 已用,AI Core 已分配zoom", "显存已用,显存已分配zoom"]);
    expect(screen.getByText("AI Core，占切片的 %")).toBeTruthy();
    expect(screen.getByTestId("history-window").textContent).toContain("每15秒一个点");
  });
});
