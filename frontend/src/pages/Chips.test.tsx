import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import type { ReactNode } from "react";
import type { Me } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { CHIP_COLUMNS } from "../live/contract";
import { ClusterLive } from "../live/store";
import { ClusterContext } from "../state/cluster";
import { allows, SessionContext } from "../state/session";
import { ChipsPage } from "./Chips";
import { stubFetch, testCluster } from "./testing";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  // the provider made its language the current one: back to English for the next test
  setCurrentI18n(makeI18n("en", ENGLISH));
});

function chipRow(id: number, values: Record<string, unknown>): unknown[] {
  const base: Record<string, unknown> = {
    id, node: "npu-node-910b-01", common_word: "Ascend910B4", index: id, uuid: `UUID-${id}`, healthy: true, cordoned: false,
    slots_used: 1, slots: 4, memory_used: 8192, memory: 32768, aicore_used: 5, aicore: 20, aicpu_used: 1, aicpu: 7, state: "healthy",
  };
  const merged = { ...base, ...values };
  return CHIP_COLUMNS.map((c) => merged[c]);
}

function renderPage(page: ReactNode) {
  const live = new ClusterLive(1, (fn) => fn());
  live.chips.load(CHIP_COLUMNS, [chipRow(1, {}), chipRow(2, { healthy: false, state: "unhealthy" })]);
  live.setConnection("live");
  const me: Me = { username: "op", role: "operator", is_service_account: false };
  const session = { me, logout: async () => {}, can: (n: Me["role"]) => allows("operator", n) };
  const value = { clusters: [testCluster], cluster: testCluster, select: () => {}, live, reloadClusters: () => {}, retry: () => {} };
  const suggestions = {
    suggestions: [], restore_available: true, restore_reason: "",
    rules: { suggest_after_seconds: 600, restore_after_seconds: 1800, auto_isolate: true, auto_restore: false },
  };
  stubFetch((url) => (url === "/api/clusters/1/chip-suggestions/" ? { body: suggestions } : undefined));
  return render(
    <SessionContext.Provider value={session}>
      <ClusterContext.Provider value={value}>{page}</ClusterContext.Provider>
    </SessionContext.Provider>,
  );
}

describe("ChipsPage", () => {
  it("counts chips, nodes and sick chips in English", async () => {
    renderPage(<ChipsPage />);
    expect((await screen.findByTestId("chip-count")).textContent).toBe("2 of 2 chips · 1 node · 1 unhealthy");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("Nodes & chips");
  });

  it("speaks Chinese: title, counts, filters, legend and the table's head", async () => {
    renderPage(
      <I18nProvider locale="zh-CN">
        <ChipsPage />
      </I18nProvider>,
    );
    expect((await screen.findByTestId("chip-count")).textContent).toBe("2 / 2 个芯片 · 1 个节点 · 1 个不健康");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("节点与芯片");
    const states = screen.getByTestId("state-filter") as HTMLSelectElement;
    expect([...states.options].map((o) => o.textContent)).toContain("已禁止调度");
    expect(screen.getByPlaceholderText("筛选节点（如 910b-01、310p）")).toBeTruthy();
    const text = document.body.textContent ?? "";
    expect(text).toContain("着色依据");
    expect(text).toContain("显存");
    expect(text).toContain("已排空");
    expect((await screen.findByTestId("chip-suggestions")).textContent).toContain("隔离不健康超过 10分钟的芯片");
    expect(screen.getByTestId("chip-suggestions").textContent).toContain("策略自动执行（隔离）");
    expect(text).not.toContain("Colour by");
    expect(text).not.toContain("Memory");
    expect(text).not.toContain("unhealthy");
  });
});
