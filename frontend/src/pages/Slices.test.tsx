import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { Page, Slice } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { ClusterContext } from "../state/cluster";
import { SlicesPage } from "./Slices";
import { testCluster } from "./testing";

const cluster = testCluster;

const slice = (id: number, pod: string, memory: number, onUnhealthyChip = false): Slice => ({
  id,
  cluster: 1,
  chip: 1,
  chip_uuid: "U1",
  chip_index: 0,
  on_unhealthy_chip: onUnhealthyChip,
  common_word: "Ascend310P",
  namespace: "ci",
  pod_name: pod,
  pod_uid: `uid-${id}`,
  container_index: 0,
  node_name: "node-a",
  template: "vir01",
  memory,
  aicore: 1,
  aicpu: 1,
  priority: 0,
  priority_class: "",
  phase: "Running",
  started_at: "2026-12-02T12:00:00Z",
});

function serve() {
  const body: Page<Slice> = { count: 2, next: null, previous: null, results: [slice(1, "a", 3072), slice(2, "b", 6144, true)] };
  const fetch = vi.fn(async () => new Response(JSON.stringify(body), { status: 200 }));
  vi.stubGlobal("fetch", fetch);
  return fetch;
}

const lastQuery = (fetch: ReturnType<typeof serve>) => {
  const calls = fetch.mock.calls as unknown as [string][];
  return new URL(calls[calls.length - 1][0], "http://x").searchParams;
};

function renderPage(locale?: "en" | "zh-CN") {
  const value = { clusters: [cluster], cluster, select: () => {}, live: null, reloadClusters: () => {}, retry: () => {} };
  const page = (
    <ClusterContext.Provider value={value}>
      <SlicesPage />
    </ClusterContext.Provider>
  );
  return render(locale ? <I18nProvider locale={locale}>{page}</I18nProvider> : page);
}

beforeEach(() => window.history.replaceState(null, "", "/slices?page=3"));
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("slices page: sorting on the server", () => {
  it("sends no ordering by default (the server's own order)", async () => {
    const fetch = serve();
    renderPage();
    await screen.findByTestId("slices-table");
    expect(lastQuery(fetch).get("ordering")).toBeNull();
    expect(lastQuery(fetch).get("page")).toBe("3");
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it("asks the API for the order of a clicked column, with tie-breakers, from page 1", async () => {
    const fetch = serve();
    renderPage();
    await screen.findByTestId("slices-table");
    fireEvent.click(screen.getByTestId("sort-memory"));
    await waitFor(() => expect(lastQuery(fetch).get("ordering")).toBe("-memory,namespace,pod_name"));
    expect(lastQuery(fetch).get("page")).toBe("1"); // back to page 1
    expect(fetch).toHaveBeenCalledTimes(2); // one refetch for the new order and page
    expect(window.location.search).toBe("?ordering=-memory");
    expect(screen.getByTestId("sort-memory").textContent).toBe("Memory ▼");
    fireEvent.click(screen.getByTestId("sort-memory"));
    await waitFor(() => expect(lastQuery(fetch).get("ordering")).toBe("memory,namespace,pod_name"));
    expect(screen.getByTestId("sort-memory").textContent).toBe("Memory ▲");
    fireEvent.click(screen.getByTestId("sort-pod_name"));
    await waitFor(() => expect(lastQuery(fetch).get("ordering")).toBe("pod_name,namespace"));
  });

  it("sorts by age as the reverse of started_at", async () => {
    const fetch = serve();
    renderPage();
    await screen.findByTestId("slices-table");
    fireEvent.click(screen.getByTestId("sort-started_at"));
    await waitFor(() => expect(lastQuery(fetch).get("ordering")).toBe("-started_at,namespace,pod_name"));
    // youngest first: age ascending
    expect(screen.getByTestId("sort-started_at").textContent).toBe("Age ▲");
    expect(screen.getByTestId("sort-started_at").closest("th")!.getAttribute("aria-sort")).toBe("ascending");
  });

  it("ignores an ordering in the URL that the API does not accept", async () => {
    window.history.replaceState(null, "", "/slices?ordering=-pod_uid");
    const fetch = serve();
    renderPage();
    await screen.findByTestId("slices-table");
    expect(lastQuery(fetch).get("ordering")).toBeNull();
  });
});

describe("slices page: a vNPU on an unhealthy chip", () => {
  it("is flagged, and only that one", async () => {
    serve();
    renderPage();
    const flagged = await screen.findAllByTestId("slice-unhealthy-chip");
    expect(flagged).toHaveLength(1);
    expect(flagged[0].closest("tr")?.textContent).toContain("b");
  });
});

describe("slices page in Chinese", () => {
  it("shows its head, columns, filters, phases and flags in Chinese", async () => {
    serve();
    renderPage("zh-CN");
    const table = await screen.findByTestId("slices-table");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("切片");
    expect(screen.getByText("2 个切片")).toBeTruthy();
    expect(screen.getByTestId("sort-memory").textContent).toBe("显存");
    expect(screen.getByTestId("sort-started_at").textContent).toBe("运行时长");
    expect(screen.getByTestId("slice-unhealthy-chip").textContent).toBe("芯片不健康");
    expect(table.querySelector("tbody")!.textContent).toContain("运行中");
    expect(table.textContent).not.toContain("Running");
    expect((screen.getByTestId("slice-search") as HTMLInputElement).placeholder).toBe("搜索 Pod、命名空间、节点或模板");
    const phase = screen.getByRole("combobox", { name: "阶段" });
    expect(phase.textContent).toContain("全部阶段");
    expect(phase.textContent).toContain("等待中");
  });
});
