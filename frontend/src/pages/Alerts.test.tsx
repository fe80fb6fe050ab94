import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import type { AlertList, PortalAlert } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { AlertsPage, AlertsPanel } from "./Alerts";
import { chipFromParam } from "./Chips";
import { renderAs, stubFetch } from "./testing";

const chipAlert: PortalAlert = {
  name: "VnpuChipUnhealthy",
  severity: "critical",
  state: "firing",
  labels: { alertname: "VnpuChipUnhealthy", severity: "critical", cluster: "demo", chip: "U-1", node: "n1" },
  summary: "Chip U-1 on node n1 of cluster demo is reported unhealthy",
  portal_path: "/chips?cluster=demo&chip=U-1",
  runbook: "docs/alerts.md#vnpuchipunhealthy",
  runbook_url: "",
  starts_at: "2026-12-02T12:00:00Z",
  silenced_by: [],
};
const silenced: PortalAlert = {
  ...chipAlert,
  name: "VnpuSyncDown",
  severity: "critical",
  state: "silenced",
  labels: { alertname: "VnpuSyncDown", severity: "critical", cluster: "demo", state: "stale" },
  summary: "Sync of cluster demo is stale",
  portal_path: "/health?cluster=demo",
  silenced_by: [{ id: "s-1", created_by: "ada", comment: "upgrading", ends_at: "2026-12-02T14:00:00Z" }],
};

function list(over: Partial<AlertList> = {}): AlertList {
  return { source: "alertmanager", notifications_configured: true, error: null, alerts: [chipAlert, silenced], not_evaluated: [], ...over };
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("AlertsPanel", () => {
  it("counts firing alerts by severity and links the first ones to their pages", async () => {
    stubFetch(() => ({ body: list() }));
    renderAs("viewer", <AlertsPanel />);
    const item = await screen.findByTestId("alerts-panel-item");
    expect(screen.getByTestId("alerts-count-critical").textContent).toBe("1");
    expect(screen.getByTestId("alerts-count-warning").textContent).toBe("0");
    expect(item.querySelector("a")?.getAttribute("href")).toBe("/chips?cluster=demo&chip=U-1");
    expect(screen.getByText("All alerts").getAttribute("href")).toBe("/alerts");
  });
  it("says why it is empty when Alertmanager is down", async () => {
    stubFetch(() => ({ body: list({ alerts: [], error: { code: "alertmanager_unavailable", message: "Alertmanager at http://am could not be reached." } }) }));
    renderAs("viewer", <AlertsPanel />);
    const note = await screen.findByTestId("alerts-source");
    expect(note.textContent).toContain("could not be reached");
    expect(screen.queryByText("No alert is firing.")).toBeNull();
  });
  it("says that notifications are not configured when the portal evaluates the alerts", async () => {
    stubFetch(() => ({ body: list({ source: "portal", notifications_configured: false, not_evaluated: ["VnpuBindTimeouts"] }) }));
    renderAs("viewer", <AlertsPanel />);
    const note = await screen.findByTestId("alerts-source");
    expect(note.textContent).toContain("Notifications are not configured");
    expect(note.textContent).toContain("VnpuBindTimeouts");
  });
});

describe("AlertsPage", () => {
  it("lists alerts with their state, links and who silenced them; no silencing for viewers", async () => {
    stubFetch(() => ({ body: list() }));
    renderAs("viewer", <AlertsPage />);
    const row = await screen.findByTestId("alert-VnpuChipUnhealthy");
    expect(row.textContent).toContain("firing");
    expect(row.textContent).toContain("docs/alerts.md#vnpuchipunhealthy");
    expect(screen.getByTestId("silenced-by").textContent).toContain("by ada");
    expect(screen.queryByTestId("silence-VnpuChipUnhealthy")).toBeNull();
  });
  it("lets an admin silence an alert for a while with a required comment", async () => {
    const fetch = stubFetch((url, init) => (url.includes("/silences/") && init.method === "POST" ? { status: 201, body: { id: "s-2" } } : { body: list() }));
    renderAs("admin", <AlertsPage />);
    fireEvent.click(await screen.findByTestId("silence-VnpuChipUnhealthy"));
    // only the firing alert can be silenced again
    expect(screen.queryByTestId("silence-VnpuSyncDown")).toBeNull();
    fireEvent.click(screen.getByTestId("silence-submit"));
    expect(await screen.findByText(/Say why/)).toBeTruthy();
    fireEvent.change(screen.getByTestId("silence-duration"), { target: { value: "1d" } });
    fireEvent.change(screen.getByTestId("silence-comment"), { target: { value: "swapping the card" } });
    fireEvent.click(screen.getByTestId("silence-submit"));
    await waitFor(() => expect(fetch.mock.calls.some(([url]) => String(url).includes("/api/alerts/silences/"))).toBe(true));
    const [, init] = fetch.mock.calls.find(([url]) => String(url).includes("/silences/"))!;
    expect(JSON.parse(String(init!.body))).toEqual({ labels: chipAlert.labels, duration: "1d", comment: "swapping the card" });
  });
  it("shows the API's field errors on the form", async () => {
    stubFetch((url) =>
      url.includes("/silences/") ? { status: 400, body: { code: "invalid", message: "duration: from 5m to 30d", errors: { duration: ["from 5m to 30d"] } } } : { body: list() },
    );
    renderAs("admin", <AlertsPage />);
    fireEvent.click(await screen.findByTestId("silence-VnpuChipUnhealthy"));
    fireEvent.change(screen.getByTestId("silence-comment"), { target: { value: "x" } });
    fireEvent.click(screen.getByTestId("silence-submit"));
    expect(await screen.findByText("from 5m to 30d")).toBeTruthy();
  });
  it("offers no silencing without Alertmanager", async () => {
    stubFetch(() => ({ body: list({ source: "portal", notifications_configured: false }) }));
    renderAs("admin", <AlertsPage />);
    await screen.findByTestId("alert-VnpuChipUnhealthy");
    expect(screen.queryByTestId("silence-VnpuChipUnhealthy")).toBeNull();
  });
});

describe("Alerts in Chinese", () => {
  it("shows severities, states, columns, the source note and the silence form in Chinese", async () => {
    stubFetch(() => ({ body: list({ source: "portal", notifications_configured: false, not_evaluated: ["VnpuBindTimeouts"] }) }));
    renderAs(
      "admin",
      <I18nProvider locale="zh-CN">
        <AlertsPage />
      </I18nProvider>,
    );
    const row = await screen.findByTestId("alert-VnpuChipUnhealthy");
    expect(row.textContent).toContain("严重");
    expect(row.textContent).toContain("触发中");
    expect(row.textContent).not.toContain("firing");
    // the alert's summary is the API's, shown as it comes
    expect(row.textContent).toContain("Chip U-1 on node n1");
    expect(screen.getByText("2 条告警 · 来自门户")).toBeTruthy();
    expect(screen.getByText("级别")).toBeTruthy();
    const note = screen.getByTestId("alerts-source");
    expect(note.textContent).toContain("未配置通知（未设置 ALERTMANAGER_URL）");
    expect(note.textContent).toContain("VnpuBindTimeouts 需要 Prometheus，因此未显示。");
    expect(screen.getByTestId("silenced-by").textContent).toMatch(/^由 ada 静默至 .+：upgrading$/);
    const states = [...(screen.getByTestId("alert-state") as HTMLSelectElement).options].map((o) => o.textContent);
    expect(states).toEqual(["全部状态", "触发中", "已静默", "已抑制"]);
  });

  it("offers the silence durations in Chinese", async () => {
    stubFetch(() => ({ body: list() }));
    renderAs(
      "admin",
      <I18nProvider locale="zh-CN">
        <AlertsPage />
      </I18nProvider>,
    );
    fireEvent.click(await screen.findByTestId("silence-VnpuChipUnhealthy"));
    const options = [...(screen.getByTestId("silence-duration") as HTMLSelectElement).options].map((o) => o.textContent);
    expect(options).toEqual(["30 分钟", "2 小时", "8 小时", "1 天", "3 天", "7 天", "30 天"]);
    fireEvent.click(screen.getByTestId("silence-submit"));
    expect(await screen.findByText("请说明原因：备注会与静默一起保存，并记入审计日志。")).toBeTruthy();
  });

  it("counts in English with plurals", async () => {
    stubFetch(() => ({ body: list({ alerts: [chipAlert] }) }));
    renderAs("admin", <AlertsPage />);
    await screen.findByTestId("alert-VnpuChipUnhealthy");
    expect(screen.getByText("1 alert · from Alertmanager")).toBeTruthy();
    fireEvent.click(screen.getByTestId("silence-VnpuChipUnhealthy"));
    const options = [...(screen.getByTestId("silence-duration") as HTMLSelectElement).options].map((o) => o.textContent);
    expect(options).toEqual(["30 minutes", "2 hours", "8 hours", "1 day", "3 days", "7 days", "30 days"]);
  });
});

describe("chipFromParam", () => {
  it("reads an id or a UUID", () => {
    const chips = [{ id: 4, uuid: "U-1" }];
    expect(chipFromParam("", chips)).toBeNull();
    expect(chipFromParam("7", chips)).toBe(7);
    expect(chipFromParam("U-1", chips)).toBe(4);
    expect(chipFromParam("U-9", chips)).toBeNull();
  });
});
