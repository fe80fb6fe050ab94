import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, screen, within } from "@testing-library/react";
import type { ClusterHealth, Drift, Fragmentation, PendingPod, RestartStates } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import type { Locale } from "../i18n/locale";
import { ClusterLive } from "../live/store";
import { ClusterContext } from "../state/cluster";
import type { Role } from "../api/types";
import { allows, SessionContext } from "../state/session";
import { OverviewPage } from "./Overview";
import { page, stubFetch, testCluster } from "./testing";

const drift: Drift = {
  in_sync: false,
  checked: "live",
  baseline_version: 3,
  live_version: 4,
  live_resource_version: "91",
  diff: "",
  unpublished: "",
} as Drift;

const health: ClusterHealth = {
  cluster: "demo",
  check_status: "fail",
  checks: [{ id: "scheduler", check_status: "fail", message: "hami-scheduler: no pod", fix: "" }],
} as ClusterHealth;

const restarts: RestartStates = {
  cluster: "demo",
  config_version: 5,
  config_changed_at: null,
  components: [
    { component: "hami-device-plugin", kind: "DaemonSet", namespace: "kube-system", restart_state: "restart_pending", message: "", restarted_at: null, loaded_version: 4, pods: [] },
  ],
  in_effect: { version: 4, published: 5, pending_restart: true, loaded_by: "hami-scheduler", loaded_at: null, why: "" },
} as unknown as RestartStates;

const pendingPod: PendingPod = {
  id: 1,
  cluster: 1,
  namespace: "ci",
  name: "job-7",
  common_word: "310P3",
  memory: 3072,
  priority: 0,
  priority_class: "",
  reason: "",
  created_at: "2026-12-07T08:00:00Z",
};

const frag: Fragmentation = {
  common_word: "310P3",
  chips: 4,
  eligible_chips: 1,
  free_memory: 8192,
  largest_template: "vir02",
  largest_template_memory: 6144,
  templates: [{ name: "vir02", memory: 6144, ai_core: 2, ai_cpu: 1, chips_with_room: 1, slices_that_fit: 1, stranded_memory: 2048 }],
  stranded_memory: 2048,
  stranded_chips: 1,
  smallest_template_memory: 3072,
};

function serve() {
  return stubFetch((url) => {
    if (url.startsWith("/api/clusters/1/drift/")) return { body: drift };
    if (url.startsWith("/api/clusters/1/health/")) return { body: health };
    if (url.startsWith("/api/clusters/1/restarts/")) return { body: restarts };
    if (url.startsWith("/api/clusters/1/sync-status/")) return { body: [] };
    if (url.startsWith("/api/clusters/1/usage-history/")) return { body: [] };
    if (url.startsWith("/api/clusters/1/fragmentation/")) return { body: [frag] };
    if (url.startsWith("/api/clusters/1/")) return { body: testCluster };
    if (url.startsWith("/api/pending-pods/")) return { body: page([pendingPod]) };
    if (url.startsWith("/api/alerts/")) return { body: { source: "portal", notifications_configured: false, error: null, alerts: [], not_evaluated: [] } };
    return undefined;
  });
}

/** The Overview in a language, with a live store that saw a slice placed and a node leave. */
function renderIn(locale: Locale) {
  const live = new ClusterLive(1, (fn) => fn());
  live.apply({ type: "delta", event: "node_removed", payload: { name: "node-9" } }, Date.now());
  live.setSync({ state: "stale", lastSyncAt: new Date(Date.now() - 300_000).toISOString(), lastSyncError: "pods: timeout" });
  const session = { me: { username: "u", role: "viewer" as const, is_service_account: false }, logout: async () => {}, can: (n: Role) => allows("viewer", n) };
  const value = { clusters: [testCluster], cluster: testCluster, select: () => {}, live, reloadClusters: () => {}, retry: () => {} };
  return render(
    <I18nProvider locale={locale}>
      <SessionContext.Provider value={session}>
        <ClusterContext.Provider value={value}>
          <OverviewPage />
        </ClusterContext.Provider>
      </SessionContext.Provider>
    </I18nProvider>,
  );
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("OverviewPage", () => {
  it("speaks English: banners, pending pods, fragmentation, the feed", async () => {
    serve();
    renderIn("en");
    expect((await screen.findByTestId("sync-banner")).textContent).toBe(
      "Sync stale. The portal last heard from the cluster 5m ago: pods: timeout What you see may not be the cluster's current state. Sync details",
    );
    expect((await screen.findByTestId("drift-banner")).textContent).toContain("Device config drift. The ConfigMap was edited outside the portal (live v4, portal baseline v3)");
    expect((await screen.findByTestId("health-banner")).textContent).toContain("1 configuration check failing: hami-scheduler: no pod");
    expect((await screen.findByTestId("restart-banner")).textContent).toContain(
      "hami-device-plugin still runs the old config until restarted. Requests are placed by v4, the version hami-scheduler loaded.",
    );
    expect((await screen.findByTestId("room-310P3")).textContent).toContain("310P3: 8 GiB free on 1 usable chip; largest slice that still fits: vir02 (6 GiB)");
    expect(within(screen.getByTestId("activity")).getByText("node left the cluster", { exact: false })).toBeTruthy();
    expect(screen.getByText("Pending pods", { selector: "h2" })).toBeTruthy();
  });

  it("speaks Chinese, names and units untranslated", async () => {
    serve();
    renderIn("zh-CN");
    expect(await screen.findByRole("heading", { level: 1, name: "总览" })).toBeTruthy();
    expect((await screen.findByTestId("sync-banner")).textContent).toBe(
      "同步滞后。门户最后一次收到该集群的消息是在5分钟前：pods: timeout。所见内容可能不是集群的当前状态。同步详情",
    );
    expect(within(screen.getByTestId("sync-banner")).getByRole("link").getAttribute("href")).toBe("/health");
    expect((await screen.findByTestId("drift-banner")).textContent).toContain("设备配置漂移。ConfigMap 在门户之外被修改（集群中为 v4，门户基线为 v3）");
    expect(screen.getByTestId("drift-banner").querySelector("b")?.textContent).toBe("设备配置漂移。");
    expect((await screen.findByTestId("health-banner")).textContent).toContain("1 项配置检查未通过：hami-scheduler: no pod");
    expect((await screen.findByTestId("restart-banner")).textContent).toContain(
      "设备配置 v5 尚未全部生效：1 个组件（hami-device-plugin）在重启前仍运行旧配置。申请当前按 v4 分配，即 hami-scheduler 加载的版本。",
    );
    expect((await screen.findByTestId("room-310P3")).textContent).toContain("310P3：1 个可用芯片上共有 8 GiB 空闲；仍可放下的最大切片：vir02（6 GiB）");
    expect(screen.getByText("等待中的 Pod", { selector: "h2" })).toBeTruthy();
    expect(within(screen.getByTestId("activity")).getByText("节点已离开集群", { exact: false })).toBeTruthy();
    expect(await screen.findByText("job-7", { exact: false })).toBeTruthy();
    const text = document.body.textContent ?? "";
    for (const english of ["Overview", "Pending pods", "Fragmentation", "Live activity", "configuration check", "unschedulable"]) {
      expect(text).not.toContain(english);
    }
  });
});
