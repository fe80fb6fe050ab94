import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import type { ChipPrice, MetricsStatus, ReportGroupBy, UsageReport } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { monthOf } from "../lib/usage";
import { CostPage } from "./Cost";
import { CostMonthlyPage } from "./CostMonthly";
import { page, renderAs, stubFetch } from "./testing";

const on: MetricsStatus = { configured: true, available: true, reason: "", queried_at: "2026-05-10T12:00:00Z" };

function report(groupBy: ReportGroupBy, over: Partial<UsageReport> = {}): UsageReport {
  const names: Record<ReportGroupBy, [string, string]> = {
    namespace: ["ci", "prod"],
    queue: ["default", "gold"],
    chip_type: ["310P3", "910B"],
  };
  const [a, b] = names[groupBy];
  return {
    metrics: on,
    start: "2026-05-01T00:00:00+08:00",
    end: "2026-06-01T00:00:00+08:00",
    hours: 744,
    group_by: groupBy,
    currency: "CNY",
    rows: [
      { group: a, slices: 3, slice_hours: 120, card_hours: 30, measured_slice_hours: 120, used_slice_hours: 80, idle_slice_hours: 40, cost: "375.00" },
      { group: b, slices: 1, slice_hours: 10.25, card_hours: 10.25, measured_slice_hours: 10.25, used_slice_hours: 10, idle_slice_hours: 0.25, cost: null },
    ],
    totals: { group: "total", slices: 4, slice_hours: 130.25, card_hours: 40.25, measured_slice_hours: 130.25, used_slice_hours: 90, idle_slice_hours: 40.25, cost: "1375.00" },
    unpriced: ["910B"],
    ...over,
  };
}

const prices: ChipPrice[] = [{ common_word: "310P3", price_per_hour: "12.50", currency: "CNY", updated_at: "2026-05-01T08:00:00Z" }];

function serve() {
  return stubFetch((url, init) => {
    if (url.startsWith("/api/usage/report/")) {
      const group = (new URLSearchParams(url.split("?")[1]).get("group_by") ?? "namespace") as ReportGroupBy;
      return { body: report(group) };
    }
    if (url.startsWith("/api/chip-prices/") && init.method === "PUT") return { body: { ...prices[0], common_word: "910B", price_per_hour: "30.00" } };
    if (url.startsWith("/api/chip-prices/") && init.method === "DELETE") return { status: 204, body: null };
    if (url.startsWith("/api/chip-prices/")) return { body: prices };
    if (url.startsWith("/api/chip-types/")) return { body: page([{ common_word: "310P3" }, { common_word: "910B" }]) };
    return undefined;
  });
}

const urls = (fetch: ReturnType<typeof serve>) => fetch.mock.calls.map((c) => (c as unknown as [string])[0]);

beforeEach(() => window.history.replaceState(null, "", "/cost"));
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("CostPage", () => {
  it("asks for the current month by namespace, and shows the rows and the totals row", async () => {
    const fetch = serve();
    renderAs("viewer", <CostPage />);
    const table = await screen.findByTestId("cost-table");
    const month = monthOf(new Date());
    expect(urls(fetch)).toContain(`/api/usage/report/?cluster=1&group_by=namespace&month=${month}`);
    const rows = within(table).getAllByTestId("report-row");
    expect(rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent))).toEqual([
      ["ci", "3", "120.0", "30.0", "120.0", "80.0", "40.0", "375.00 CNY"],
      ["prod", "1", "10.3", "10.3", "10.3", "10.0", "0.25", "—"],
    ]);
    const totals = within(table).getByTestId("report-totals");
    expect([...totals.querySelectorAll("td")].map((td) => td.textContent)).toEqual(["Total", "4", "130.3", "40.3", "130.3", "90.0", "40.3", "1,375.00 CNY"]);
    expect(table.querySelector("thead")!.textContent).toContain("Cost (CNY)");
  });

  it("links the same query as CSV, and the printable monthly report", async () => {
    window.history.replaceState(null, "", "/cost?month=2026-04&group=queue");
    const fetch = serve();
    renderAs("viewer", <CostPage />);
    await screen.findByTestId("cost-table");
    expect(urls(fetch)).toContain("/api/usage/report/?cluster=1&group_by=queue&month=2026-04");
    expect(screen.getByTestId("cost-csv").getAttribute("href")).toBe("/api/usage/report/?cluster=1&group_by=queue&month=2026-04&format=csv");
    expect(screen.getByTestId("monthly-link").getAttribute("href")).toBe("/cost/monthly?month=2026-04");
  });

  it("lists unpriced chip types", async () => {
    serve();
    renderAs("viewer", <CostPage />);
    expect((await screen.findByTestId("unpriced")).textContent).toContain("No price for 910B");
  });

  it("asks for a custom range, the last day included", async () => {
    window.history.replaceState(null, "", "/cost?start=2026-05-01&end=2026-05-07");
    const fetch = serve();
    renderAs("viewer", <CostPage />);
    await screen.findByTestId("cost-table");
    const url = urls(fetch).find((u) => u.startsWith("/api/usage/report/"))!;
    const q = new URLSearchParams(url.split("?")[1]);
    expect(q.get("start")).toBe("2026-05-01T00:00:00Z");
    expect(q.get("end")).toBe("2026-05-08T00:00:00Z");
    expect(q.get("month")).toBeNull();
    expect(screen.getByTestId("cost-csv").getAttribute("href")).toContain("format=csv");
  });

  it("lets admins set a price, and nobody else", async () => {
    const fetch = serve();
    renderAs("admin", <CostPage />);
    const row = await screen.findByTestId("price-910B");
    expect(row.textContent).toContain("not set");
    expect((await screen.findByTestId("price-310P3")).textContent).toContain("12.50 CNY");
    fireEvent.click(within(row).getByTestId("price-edit-910B"));
    fireEvent.change(screen.getByTestId("price-input-910B"), { target: { value: "30" } });
    fireEvent.click(screen.getByTestId("price-save-910B"));
    await waitFor(() => {
      const put = fetch.mock.calls.find((c) => (c[1] as RequestInit | undefined)?.method === "PUT");
      expect(put).toBeTruthy();
      expect(put![0]).toBe("/api/chip-prices/910B/");
      expect(JSON.parse(String((put![1] as RequestInit).body))).toEqual({ price_per_hour: "30.00" });
    });
    cleanup();
    serve();
    renderAs("operator", <CostPage />);
    await screen.findByTestId("price-310P3");
    expect(screen.queryByTestId("price-edit-310P3")).toBeNull();
    expect(screen.queryByTestId("price-delete-310P3")).toBeNull();
  });

  it("removes a price after asking", async () => {
    const fetch = serve();
    vi.stubGlobal("confirm", () => true);
    renderAs("admin", <CostPage />);
    fireEvent.click(await screen.findByTestId("price-delete-310P3"));
    await waitFor(() => {
      const del = fetch.mock.calls.find((c) => (c[1] as RequestInit | undefined)?.method === "DELETE");
      expect(del?.[0]).toBe("/api/chip-prices/310P3/");
    });
  });

  it("refuses a price that is not a number", async () => {
    const fetch = serve();
    renderAs("admin", <CostPage />);
    fireEvent.click(await screen.findByTestId("price-edit-910B"));
    fireEvent.change(screen.getByTestId("price-input-910B"), { target: { value: "-3" } });
    fireEvent.click(screen.getByTestId("price-save-910B"));
    expect((await screen.findByRole("alert")).textContent).toContain("a number ≥ 0");
    expect(fetch.mock.calls.some((c) => (c[1] as RequestInit | undefined)?.method === "PUT")).toBe(false);
  });
});

describe("CostMonthlyPage", () => {
  it("shows the month by namespace, by queue and by chip type on one page", async () => {
    window.history.replaceState(null, "", "/cost/monthly?month=2026-05");
    const fetch = serve();
    renderAs("viewer", <CostMonthlyPage />);
    expect(screen.getByTestId("monthly-report").textContent).toContain("May 2026");
    for (const [group, first] of [
      ["namespace", "ci"],
      ["queue", "default"],
      ["chip_type", "310P3"],
    ]) {
      const section = screen.getByTestId(`monthly-${group}`);
      const table = await within(section).findByRole("table");
      expect(table.dataset.groupBy).toBe(group);
      expect(within(table).getAllByTestId("report-row")[0].textContent).toContain(first);
      expect(within(table).getByTestId("report-totals").textContent).toContain("1,375.00 CNY");
      expect(urls(fetch)).toContain(`/api/usage/report/?cluster=1&group_by=${group}&month=2026-05`);
    }
    expect(screen.getByText("Print").closest(".no-print")).toBeTruthy();
  });
});

describe("Cost in Chinese", () => {
  it("reads the report and the prices in Chinese; groups, types and currencies as they are", async () => {
    window.history.replaceState(null, "", "/cost?month=2026-05");
    serve();
    renderAs(
      "admin",
      <I18nProvider locale="zh-CN">
        <CostPage />
      </I18nProvider>,
    );
    const table = await screen.findByTestId("cost-table");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("成本");
    expect(table.querySelector("thead")!.textContent).toContain("命名空间");
    expect(table.querySelector("thead")!.textContent).toContain("成本（CNY）");
    expect([...within(table).getByTestId("report-totals").querySelectorAll("td")].map((td) => td.textContent)).toEqual([
      "合计", "4", "130.3", "40.3", "130.3", "90.0", "40.3", "1,375.00 CNY",
    ]);
    expect(screen.getByTestId("unpriced").textContent).toBe("910B 尚未定价：其整卡·小时未计入成本。请在“各芯片类型价格”中设置价格。");
    expect(screen.getByTestId("report-period").textContent).toBe("2026-04-30 16:00 UTC – 2026-05-31 16:00 UTC · 截至目前 744.0 小时 · 价格币种 CNY");
    expect((await screen.findByTestId("price-910B")).textContent).toContain("未设置");
    fireEvent.click(screen.getByTestId("price-edit-910B"));
    fireEvent.change(screen.getByTestId("price-input-910B"), { target: { value: "abc" } });
    fireEvent.click(screen.getByTestId("price-save-910B"));
    expect((await screen.findByRole("alert")).textContent).toBe("价格须为 ≥ 0 的数字，最多 4 位小数，例如 12.50。");
    const text = document.body.textContent ?? "";
    for (const english of ["Total", "Slice-hours", "Prices per chip type", "not set", "Download"]) expect(text).not.toContain(english);
  });

  it("prints the monthly report in Chinese", async () => {
    window.history.replaceState(null, "", "/cost/monthly?month=2026-05");
    serve();
    renderAs(
      "viewer",
      <I18nProvider locale="zh-CN">
        <CostMonthlyPage />
      </I18nProvider>,
    );
    expect((await screen.findByRole("heading", { level: 1 })).textContent).toBe("用量与成本 · 2026年5月");
    expect(within(screen.getByTestId("monthly-chip_type")).getByRole("heading", { level: 2 }).textContent).toBe("按芯片类型");
    await within(screen.getByTestId("monthly-queue")).findByRole("table");
    expect(screen.getByText("打印").closest(".no-print")).toBeTruthy();
    expect(screen.getByTestId("monthly-report").textContent).toContain("价格由管理员在成本页面设置。");
    expect(screen.getByTestId("monthly-report").textContent).toContain("打印自 vNPU Portal，数据截至 2026/05/10");
  });
});
