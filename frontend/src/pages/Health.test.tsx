import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, screen, waitFor } from "@testing-library/react";
import type { ClusterHealth, Drift, RestartStates, SyncCursor } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { HealthPage } from "./Health";
import { renderAs, stubFetch } from "./testing";

const health: ClusterHealth = {
  cluster: "demo",
  check_status: "warn",
  checks: [
    { id: "deviceshare_enabled", check_status: "ok", message: "deviceshare is on", fix: "" },
    { id: "node_lock", check_status: "warn", message: "no node lock", fix: 'set "nodeLock" to true' },
    { id: "brand_new_check", check_status: "fail", message: "something new", fix: "" },
  ],
};
const drift: Drift = { in_sync: false, checked: "live", baseline_version: 2, live_version: null, live_resource_version: "9", diff: "- a\n+ b", unpublished: "" };
const cursor: SyncCursor = {
  resource: "pods", resource_version: "", last_list_at: null, last_event_at: null, last_success_at: null, last_error: "", last_error_at: null,
  relists: 1, restarts: 0, crashes: 0, events: 12, skipped_objects: [], served: false,
};
const restarts: RestartStates = { cluster: "demo", config_version: null, config_changed_at: null, components: [], in_effect: null } as unknown as RestartStates;

function stub() {
  stubFetch((url) => {
    if (url.includes("/health/")) return { body: health };
    if (url.includes("/drift/")) return { body: drift };
    if (url.includes("/sync-status/")) return { body: [cursor] };
    if (url.includes("/restarts/")) return { body: restarts };
    return undefined;
  });
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("HealthPage", () => {
  it("names the checks it knows, and shows an unknown one by its id", async () => {
    stub();
    renderAs("viewer", <HealthPage />);
    const checks = await screen.findByTestId("health-checks");
    expect(checks.textContent).toContain("deviceshare plugin");
    expect(checks.textContent).toContain("Node lock");
    expect(checks.textContent).toContain("brand_new_check");
    expect(checks.querySelector("code")?.textContent).toBe("nodeLock");
    expect(screen.getByText("Configuration health")).toBeTruthy();
  });

  it("speaks Chinese: titles, check names, statuses, drift and the watches' columns", async () => {
    stub();
    renderAs(
      "viewer",
      <I18nProvider locale="zh-CN">
        <HealthPage />
      </I18nProvider>,
    );
    const checks = await screen.findByTestId("health-checks");
    expect(screen.getByText("配置健康状况")).toBeTruthy();
    expect(checks.textContent).toContain("节点锁");
    expect(checks.textContent).toContain("正常");
    expect(checks.textContent).toContain("修复：set ");
    // the API's own words stay as they come
    expect(checks.textContent).toContain("no node lock");
    await waitFor(() => expect(screen.getByText("有人在门户之外修改了 ConfigMap。", { exact: false })).toBeTruthy());
    expect(screen.getByRole("link", { name: "采纳该修改或发布覆盖" }).getAttribute("href")).toBe("/templates?tab=publish");
    const table = await screen.findByTestId("sync-table");
    await waitFor(() => expect(table.textContent).toContain("该集群不提供此资源（已跳过）"));
    expect(table.textContent).toContain("最近成功");
    expect(document.body.textContent).not.toContain("Checks");
    expect(document.body.textContent).not.toContain("Node lock");
  });
});
