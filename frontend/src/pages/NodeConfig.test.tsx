import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import type { NodeConfigHealth, NodeConfigNode, NodeConfigState, NodeConfigWhatIf } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { NodeConfigPage } from "./NodeConfig";
import { page, renderAs, stubFetch } from "./testing";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

const KUBECTL = "kubectl -n kube-system patch daemonset hami-ascend-device-plugin --type strategic -p '{...}'";
const unread: NodeConfigHealth = {
  cluster: "demo", check_status: "fail", readable: false,
  checks: [{ id: "plugin_version", check_status: "fail", message: "v1.1.0 has no --node_config_file flag", fix: "upgrade the plugin to v1.4.0" }],
  patch: { spec: { template: { spec: { containers: [{ name: "device-plugin" }] } } } },
  kubectl: KUBECTL,
  nodes: [{ name: "npu-node-910b-01", plugin_image: "projecthami/ascend-device-plugin:v1.1.0", plugin_version: "v1.1.0", version_source: "daemonset",
    applies: [], has_entry: null, entry: "", check_status: "fail", message: "the plugin reads no node config", fix: "" }],
};

function entry(over: Partial<NodeConfigNode> & { name: string }): NodeConfigNode {
  return {
    known: true, has_entry: true, position: 0, hami_vnpu_core: false, v_device_count: 4, filter_uuids: [], filter_indexes: [],
    in_effect: { version: 3, published_version: 3, plugin_pod: "plugin-abc", started_at: null, restart_pending: false, why: "" }, ...over,
  };
}

function liveState(nodes: NodeConfigNode[], over: Partial<NodeConfigState> = {}): NodeConfigState {
  return {
    cluster: "demo", configmap: { namespace: "kube-system", name: "hami-device-node-config", state: "present", resource_version: "7", has_key: true },
    text: "{}", baseline_version: 3, drift: { in_sync: true, baseline_version: 3, live_version: 3, why: "", diff: "" }, issues: [], plugin_pods: "live",
    nodes, ...over,
  };
}

describe("NodeConfigPage", () => {
  it("says the node config is not read, why, and gives the patch and the command to copy", async () => {
    stubFetch((url) => (url.includes("node-config/health") ? { body: unread } : url.endsWith("/node-config/") ? { body: liveState([]) } : { body: page([]) }));
    renderAs("viewer", <NodeConfigPage />);
    await waitFor(() => expect(screen.getByTestId("node-config-not-read").textContent).toContain("v1.1.0 has no --node_config_file flag"));
    expect(screen.getByTestId("node-config-kubectl").textContent).toContain(KUBECTL);
    expect(screen.getByTestId("node-config-patch").textContent).toContain('"device-plugin"');
    expect(screen.getByTestId("node-config-node-npu-node-910b-01").textContent).toContain("v1.1.0");
    await waitFor(() => expect(screen.getByTestId("node-config-editor")).toBeTruthy());
  });

  it("asks the what-if about a drafted node and shows its answer", async () => {
    const answer: NodeConfigWhatIf = {
      cluster: "demo", errors: [], warnings: [], readable: false, not_read_because: ["v1.1.0 reads no node config"],
      nodes: [{ name: "npu-node-910b-01", changed: true, changes: ["slots per chip 4 → 8"], ignored: [], mode_before: "template", mode_after: "hami-core",
        drain_first: true, stranded_slices: [{ namespace: "t", pod: "p", chip_uuid: "U", chip_index: 0, template: "vir05", memory: 8192, reasons: ["mode switch"] }],
        room: [] }],
      unblocked: [], blocked: [], drain_first: ["npu-node-910b-01"], unknown_nodes: [],
    };
    const text = JSON.stringify({ nodes: [{ name: "npu-node-910b-01", "hami-vnpu-core": true, vDeviceCount: 8 }] });
    const fetch = stubFetch((url) => {
      if (url.includes("node-config/health")) return { body: { ...unread, readable: true, check_status: "ok" } };
      if (url.includes("node-config/what-if")) return { body: answer };
      if (url.includes("node-config/validate")) return { body: { valid: true, text, errors: [], warnings: [] } };
      if (url.endsWith("/node-config/")) return { body: liveState([]) };
      return { body: page([]) };
    });
    renderAs("viewer", <NodeConfigPage />);
    // no live chips in this test: a node is added by name from the health's rows
    await waitFor(() => expect(screen.getByTestId("node-config-editor")).toBeTruthy());
    fireEvent.change(screen.getByTestId("whatif-node"), { target: { value: "npu-node-910b-01" } });
    fireEvent.click(screen.getByTestId("whatif-add"));
    fireEvent.change(screen.getByTestId("whatif-mode"), { target: { value: "hami-core" } });
    fireEvent.change(screen.getByTestId("whatif-slots"), { target: { value: "x" } });
    fireEvent.click(screen.getByTestId("whatif-run"));
    expect(screen.getByText("A whole number above 0, or empty for the default.")).toBeTruthy();
    fireEvent.change(screen.getByTestId("whatif-slots"), { target: { value: "8" } });
    fireEvent.click(screen.getByTestId("whatif-run"));
    await waitFor(() => expect(screen.getByTestId("whatif-drain-first").textContent).toContain("Cordon and drain npu-node-910b-01"));
    expect(screen.getByTestId("whatif-stranded-npu-node-910b-01").textContent).toContain("mode switch");
    expect(screen.getByTestId("whatif-not-read").textContent).toContain("v1.1.0 reads no node config");
    const body = (part: string) => JSON.parse(String((fetch.mock.calls.find(([url]) => String(url).includes(part))![1] as RequestInit).body));
    // a new entry: the edits name only what is set; the what-if reads the text they make
    expect(body("validate")).toEqual({ nodes: [{ name: "npu-node-910b-01", hami_vnpu_core: true, v_device_count: 8 }] });
    expect(body("what-if")).toEqual({ text });
  });

  it("starts from the live entry, puts the validation's errors on the field, and publishes with a reason after the confirmations the API asks", async () => {
    const readable = { ...unread, readable: true, check_status: "ok" as const, kubectl: "", patch: null };
    const text = JSON.stringify({ nodes: [{ name: "npu-node-910b-01", "hami-vnpu-core": false, vDeviceCount: 9 }] });
    let valid = false;
    let publishes = 0;
    const fetch = stubFetch((url, init) => {
      if (url.includes("node-config/health")) return { body: readable };
      if (url.includes("node-config/validate"))
        return { body: { valid, text, errors: valid ? [] : [{ field: "nodes[0].vDeviceCount", message: "the templates fill at most 7 slots", severity: "error" }], warnings: [] } };
      if (url.includes("node-config/diff")) return { body: { from: "live", to: "draft", diff: '-    "vDeviceCount": 4\n+    "vDeviceCount": 9' } };
      if (url.includes("node-config/publish")) {
        publishes += 1;
        const sent = JSON.parse(String(init.body));
        if (!sent.confirm_warnings)
          return { status: 400, body: { code: "unconfirmed_warnings", message: "confirm_warnings: 1 warning(s)", errors: { confirm_warnings: ["nodes[0].filterDevices.uuid[0]: not a chip of that node", "send confirm_warnings: true to publish anyway"] } } };
        return { status: 201, body: { number: 4, source: "published", author: "u", reason: sent.reason, resource_version: "8", previous_resource_version: "7", created_at: "", diff: "", forced: false, rollback_of: null, warnings: [] } };
      }
      if (url.endsWith("/node-config/")) return { body: liveState([entry({ name: "npu-node-910b-01" })]) };
      return { body: page([]) };
    });
    renderAs("operator", <NodeConfigPage />);
    await waitFor(() => expect((screen.getByTestId("whatif-slots") as HTMLInputElement).value).toBe("4"));
    fireEvent.change(screen.getByTestId("whatif-slots"), { target: { value: "9" } });
    fireEvent.click(screen.getByTestId("draft-validate"));
    await waitFor(() => expect(screen.getByTestId("whatif-draft-npu-node-910b-01").textContent).toContain("the templates fill at most 7 slots"));
    valid = true;
    fireEvent.click(screen.getByTestId("draft-publish"));
    await waitFor(() => expect(screen.getByTestId("publish-diff").textContent).toContain('"vDeviceCount": 9'));
    fireEvent.change(screen.getByTestId("publish-reason"), { target: { value: "more slots" } });
    fireEvent.click(screen.getByTestId("publish-submit"));
    await waitFor(() => expect(screen.getByTestId("publish-confirms").textContent).toContain("not a chip of that node"));
    fireEvent.click(screen.getByTestId("confirm-warnings"));
    fireEvent.click(screen.getByTestId("publish-submit"));
    await waitFor(() => expect(screen.getByTestId("node-config-published").textContent).toContain("Published v4"));
    expect(publishes).toBe(2);
    const last = fetch.mock.calls.filter(([url]) => String(url).includes("publish")).pop()!;
    expect(JSON.parse(String((last[1] as RequestInit).body))).toEqual({
      nodes: [{ name: "npu-node-910b-01", v_device_count: 9 }], reason: "more slots", expected_version: 3, confirm_warnings: true, confirm_unread: false,
    });
  });

  it("says a stale publish was refused and offers a reload", async () => {
    stubFetch((url) => {
      if (url.includes("node-config/health")) return { body: { ...unread, readable: true, check_status: "ok" } };
      if (url.includes("node-config/validate")) return { body: { valid: true, text: "{}", errors: [], warnings: [] } };
      if (url.includes("node-config/diff")) return { body: { from: "live", to: "draft", diff: "" } };
      if (url.includes("node-config/publish")) return { status: 409, body: { code: "stale_version", message: "the node config is at v4, not v3" } };
      if (url.endsWith("/node-config/")) return { body: liveState([entry({ name: "npu-node-910b-01" })]) };
      return { body: page([]) };
    });
    renderAs("operator", <NodeConfigPage />);
    await waitFor(() => expect(screen.getByTestId("whatif-slots")).toBeTruthy());
    fireEvent.change(screen.getByTestId("whatif-slots"), { target: { value: "5" } });
    fireEvent.click(screen.getByTestId("draft-publish"));
    await waitFor(() => expect(screen.getByTestId("publish-diff")).toBeTruthy());
    fireEvent.change(screen.getByTestId("publish-reason"), { target: { value: "x" } });
    fireEvent.click(screen.getByTestId("publish-submit"));
    await waitFor(() => expect(screen.getByTestId("publish-conflict").textContent).toContain("changed since this draft was read"));
    expect(screen.getByTestId("publish-error").textContent).toContain("the node config is at v4, not v3");
    fireEvent.click(screen.getByTestId("publish-reload"));
    await waitFor(() => expect((screen.getByTestId("whatif-slots") as HTMLInputElement).value).toBe("4"));
  });

  it("shows the version in effect, restart pending, and a refused restart with the API's message", async () => {
    const readable = { ...unread, readable: true, check_status: "ok" as const };
    const pending = entry({ name: "npu-node-910b-01", in_effect: { version: 3, published_version: 4, plugin_pod: "plugin-abc", started_at: null, restart_pending: true, why: "v4 changes its entry" } });
    stubFetch((url) => {
      if (url.includes("node-config/health")) return { body: readable };
      if (url.includes("node-config/restart")) return { status: 409, body: { code: "plugin_restart_blocked", message: "a device-config restart awaits confirmation" } };
      if (url.includes("node-config/versions"))
        return { body: page([4, 3].map((n) => ({ id: n, number: n, source: "published", author: "u", reason: `reason ${n}`, sha256: "", resource_version: "", created_at: "2026-01-01T00:00:00Z", text: "{}" }))) };
      if (url.includes("node-config/diff")) return { body: { from: "v3", to: "v4", diff: "+ changed line" } };
      if (url.endsWith("/node-config/")) return { body: liveState([pending]) };
      return { body: page([]) };
    });
    renderAs("operator", <NodeConfigPage />);
    await waitFor(() => expect(screen.getByTestId("in-effect-npu-node-910b-01").textContent).toContain("restart pending"));
    expect(screen.getByTestId("in-effect-npu-node-910b-01").textContent).toContain("v3");
    await waitFor(() => expect(screen.getByTestId("nc-version-diff").textContent).toContain("+ changed line"));
    expect(screen.getByTestId("nc-versions").textContent).toContain("reason 4");
    fireEvent.click(screen.getByTestId("restart-plugin-npu-node-910b-01"));
    fireEvent.change(screen.getByTestId("plugin-restart-reason"), { target: { value: "apply v4" } });
    fireEvent.click(screen.getByTestId("plugin-restart-submit"));
    await waitFor(() => expect(screen.getByTestId("plugin-restart-error").textContent).toContain("a device-config restart awaits confirmation"));
  });

  it("speaks Chinese: the banner, the nodes, the editor, the what-if, the history and the restart dialog", async () => {
    const answer: NodeConfigWhatIf = {
      cluster: "demo", errors: [], warnings: [], readable: true, not_read_because: [],
      nodes: [{ name: "npu-node-910b-01", changed: true, changes: ["slots per chip 4 → 8"], ignored: [], mode_before: "template", mode_after: "hami-core",
        drain_first: true, stranded_slices: [], room: [] }],
      unblocked: [], blocked: [], drain_first: ["npu-node-910b-01"], unknown_nodes: [],
    };
    const pending = entry({ name: "npu-node-910b-01", in_effect: { version: 3, published_version: 4, plugin_pod: "plugin-abc", started_at: null, restart_pending: true, why: "" } });
    const text = JSON.stringify({ nodes: [{ name: "npu-node-910b-01", "hami-vnpu-core": true, vDeviceCount: 4 }] });
    stubFetch((url) => {
      if (url.includes("node-config/health")) return { body: unread };
      if (url.includes("node-config/what-if")) return { body: answer };
      if (url.includes("node-config/validate")) return { body: { valid: true, text, errors: [], warnings: [{ field: "", message: "w" }] } };
      if (url.includes("node-config/versions"))
        return { body: page([4, 3].map((n) => ({ id: n, number: n, source: "published", author: "u", reason: `reason ${n}`, sha256: "", resource_version: "", created_at: "2026-01-01T00:00:00Z", text: "{}" }))) };
      if (url.includes("node-config/diff")) return { body: { from: "v3", to: "v4", diff: "" } };
      if (url.endsWith("/node-config/")) return { body: liveState([pending]) };
      return { body: page([]) };
    });
    renderAs(
      "operator",
      <I18nProvider locale="zh-CN">
        <NodeConfigPage />
      </I18nProvider>,
    );
    const banner = await screen.findByTestId("node-config-not-read");
    expect(banner.querySelector("b")?.textContent).toBe("设备插件未读取节点配置");
    expect(banner.textContent).toContain("修复：upgrade the plugin to v1.4.0");
    expect(screen.getByText("节点配置")).toBeTruthy();
    expect(screen.getByTestId("node-config-nodes").textContent).toContain("每芯片槽位数");
    expect(screen.getByTestId("node-config-nodes").textContent).toContain("未同步");
    await waitFor(() => expect(screen.getByTestId("in-effect-npu-node-910b-01").textContent).toContain("待重启"));
    // the editor, a draft and what it would do
    fireEvent.change(screen.getByTestId("whatif-mode"), { target: { value: "hami-core" } });
    expect(screen.getByTestId("whatif-draft-npu-node-910b-01").textContent).toContain("删除条目");
    fireEvent.click(screen.getByTestId("draft-validate"));
    await waitFor(() => expect(screen.getByTestId("draft-validation").textContent).toContain("校验通过，有 1 条警告。"));
    fireEvent.click(screen.getByTestId("whatif-run"));
    const drain = await screen.findByTestId("whatif-drain-first");
    expect(drain.textContent).toBe("运行中的切片阻止了 npu-node-910b-01 的模式切换：请先排空（禁止调度并排空 npu-node-910b-01）。");
    expect(drain.querySelector("a")?.getAttribute("href")).toBe("/chips?node=npu-node-910b-01");
    expect(screen.getByTestId("whatif-effect-npu-node-910b-01").textContent).toContain("模式 template → hami-core");
    // the history's columns and the identical diff
    await waitFor(() => expect(screen.getByTestId("nc-versions").textContent).toContain("已发布"));
    expect(screen.getByTestId("nc-versions").textContent).toContain("最新");
    expect(screen.getByTestId("nc-versions").textContent).toContain("回滚");
    await waitFor(() => expect(screen.getByTestId("nc-version-diff").textContent).toContain("两个版本完全相同。"));
    fireEvent.click(screen.getByTestId("restart-plugin-npu-node-910b-01"));
    expect(screen.getByText("重启 npu-node-910b-01 上的设备插件？")).toBeTruthy();
    expect(screen.getByRole("dialog").querySelector("a")?.textContent).toBe("禁止调度并排空 npu-node-910b-01");
    for (const english of ["Node config", "restart pending", "Slots per chip", "Roll back", "newest"]) expect(document.body.textContent).not.toContain(english);
  });
});
