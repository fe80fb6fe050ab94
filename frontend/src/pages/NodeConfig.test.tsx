import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import type { NodeConfigHealth, NodeConfigWhatIf } from "../api/types";
import { NodeConfigPage } from "./NodeConfig";
import { page, renderAs, stubFetch } from "./testing";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
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

describe("NodeConfigPage", () => {
  it("says the node config is not read, why, and gives the patch and the command to copy", async () => {
    stubFetch((url) => (url.includes("node-config/health") ? { body: unread } : { body: page([]) }));
    renderAs("viewer", <NodeConfigPage />);
    await waitFor(() => expect(screen.getByTestId("node-config-not-read").textContent).toContain("v1.1.0 has no --node_config_file flag"));
    expect(screen.getByTestId("node-config-kubectl").textContent).toContain(KUBECTL);
    expect(screen.getByTestId("node-config-patch").textContent).toContain('"device-plugin"');
    expect(screen.getByTestId("node-config-node-npu-node-910b-01").textContent).toContain("v1.1.0");
    expect(screen.getByTestId("node-config-publish-placeholder")).toBeTruthy();
  });

  it("asks the what-if about a drafted node and shows its answer", async () => {
    const answer: NodeConfigWhatIf = {
      cluster: "demo", errors: [], warnings: [], readable: false, not_read_because: ["v1.1.0 reads no node config"],
      nodes: [{ name: "npu-node-910b-01", changed: true, changes: ["slots per chip 4 → 8"], ignored: [], mode_before: "template", mode_after: "hami-core",
        drain_first: true, stranded_slices: [{ namespace: "t", pod: "p", chip_uuid: "U", chip_index: 0, template: "vir05", memory: 8192, reasons: ["mode switch"] }],
        room: [] }],
      unblocked: [], blocked: [], drain_first: ["npu-node-910b-01"], unknown_nodes: [],
    };
    const fetch = stubFetch((url) => {
      if (url.includes("node-config/health")) return { body: { ...unread, readable: true, check_status: "ok" } };
      if (url.includes("node-config/what-if")) return { body: answer };
      return { body: page([]) };
    });
    renderAs("viewer", <NodeConfigPage />);
    // no live chips in this test: a node is added by name from the health's rows
    await waitFor(() => expect(screen.getByTestId("node-config-read")).toBeTruthy());
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
    const posted = fetch.mock.calls.find(([url]) => String(url).includes("what-if"))!;
    expect(JSON.parse(String((posted[1] as RequestInit).body))).toEqual({
      nodes: [{ name: "npu-node-910b-01", "hami-vnpu-core": true, vDeviceCount: 8 }],
    });
  });
});
