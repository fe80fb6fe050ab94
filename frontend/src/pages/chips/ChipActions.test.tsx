import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { ChipDetail, DrainPlan, NodeConfigHealth, Slice } from "../../api/types";
import { ENGLISH } from "../../i18n/catalog";
import { I18nProvider } from "../../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../../i18n/intl";
import type { Chip } from "../../lib/chips";
import { page, renderAs, stubFetch } from "../testing";
import { ChipActions } from "./ChipActions";
import { DrainPlanView, drainSummary } from "./DrainPlan";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

const chip: Chip = {
  id: 5, node: "npu-node-910b-01", type: "Ascend910B4", index: 2, uuid: "UUID-5", healthy: false, cordoned: false,
  slotsUsed: 1, slots: 4, memUsed: 8192, mem: 32768, coreUsed: 5, core: 20, cpuUsed: 1, cpu: 7, state: "unhealthy",
};

function detail(over: Partial<ChipDetail> = {}): ChipDetail {
  return {
    id: 5, cluster: 1, node: chip.node, common_word: chip.type, uuid: chip.uuid, index: 2, healthy: false, cordoned: false, state: "unhealthy",
    drain: null, network_id: null, handshake: "", handshake_at: null, slots: 4, slots_used: 1, memory: 32768, memory_used: 8192, aicore: 20,
    aicore_used: 5, aicpu: 7, aicpu_used: 1, fits: [], largest_template: null, running_while_unhealthy: 1, registered: true, isolation: "",
    isolation_reason: "", isolation_by: "", isolation_since: null, isolation_seen: "", isolation_overdue: false, ...over,
  } as ChipDetail;
}

const slice = { id: 1, namespace: "team", pod_name: "train-1", template: "vir05_1c_8g", memory: 8192 } as Slice;

const health = (readable: boolean): NodeConfigHealth => ({
  cluster: "demo", check_status: readable ? "ok" : "fail", readable, checks: [], patch: readable ? null : { spec: {} },
  kubectl: readable ? "" : "kubectl -n kube-system patch daemonset hami-ascend-device-plugin --type strategic -p '{}'",
  nodes: [{
    name: chip.node, plugin_image: "x/ascend-device-plugin:v1.1.0", plugin_version: "v1.1.0", version_source: "daemonset", applies: [],
    has_entry: null, entry: "", check_status: readable ? "ok" : "fail", message: "v1.1.0 reads no node config", fix: "upgrade to v1.4.0",
  }],
});

describe("ChipActions", () => {
  it("offers only what the state allows, and nothing to viewers", async () => {
    stubFetch((url) => (url.startsWith("/api/chips/5/") ? { body: detail() } : undefined));
    renderAs("operator", <ChipActions chip={chip} slices={[slice]} clusterId={1} />);
    expect(screen.getByTestId("chip-act-isolate")).toBeTruthy();
    expect(screen.getByTestId("chip-act-drain")).toBeTruthy();
    expect(screen.queryByTestId("chip-act-restore")).toBeNull();
    expect(screen.queryByTestId("chip-act-uncordon")).toBeNull();
    cleanup();
    renderAs("viewer", <ChipActions chip={chip} slices={[slice]} clusterId={1} />);
    expect(screen.queryByTestId("chip-act-isolate")).toBeNull();
  });

  it("opens the act a suggestion asks for, once, and only if the state allows it", async () => {
    stubFetch((url) => (url.startsWith("/api/chips/5/") ? { body: detail() } : url.includes("node-config/health") ? { body: health(true) } : undefined));
    const taken = vi.fn();
    renderAs("operator", <ChipActions chip={chip} slices={[slice]} clusterId={1} request="isolate" onRequestTaken={taken} />);
    await waitFor(() => expect(screen.getByTestId("isolate-preview")).toBeTruthy());
    expect(taken).toHaveBeenCalledTimes(1);
    cleanup();
    renderAs("operator", <ChipActions chip={chip} slices={[slice]} clusterId={1} request="restore" onRequestTaken={taken} />);
    expect(taken).toHaveBeenCalledTimes(2);
    expect(screen.queryByTestId("restore-submit")).toBeNull();
  });

  it("isolate shows the slices that keep running and the node's plugin problem, then the API's 400 with the patch to copy", async () => {
    const fetch = stubFetch((url, init) => {
      if (url === "/api/chips/5/isolate/" && init.method === "POST")
        return {
          status: 400,
          body: {
            code: "invalid",
            message: "the device plugin on node npu-node-910b-01 does not read the node config: v1.1.0 (fix: patch the DaemonSet)",
            errors: { node: ["v1.1.0 (fix: patch the DaemonSet)"] },
          },
        };
      if (url.includes("node-config/health")) return { body: health(false) };
      if (url.startsWith("/api/chips/5/")) return { body: detail() };
      return undefined;
    });
    renderAs("operator", <ChipActions chip={chip} slices={[slice]} clusterId={1} />);
    fireEvent.click(screen.getByTestId("chip-act-isolate"));
    expect(screen.getByTestId("isolate-slices").textContent).toContain("team/train-1");
    expect(screen.getByTestId("isolate-slices").textContent).toContain("keep running until drained");
    await waitFor(() => expect(screen.getByTestId("isolate-node-health").textContent).toContain("upgrade to v1.4.0"));
    fireEvent.change(screen.getByTestId("isolate-reason"), { target: { value: "ECC errors" } });
    fireEvent.click(screen.getByTestId("isolate-submit"));
    await waitFor(() => expect(screen.getByTestId("isolate-error").textContent).toContain("does not read the node config"));
    expect(screen.getByTestId("isolate-error").textContent).toContain("fix: patch the DaemonSet");
    await waitFor(() => expect(screen.getByTestId("node-config-kubectl").textContent).toContain("kubectl -n kube-system patch daemonset"));
    const posted = fetch.mock.calls.find(([url]) => url === "/api/chips/5/isolate/");
    expect(JSON.parse(String((posted![1] as RequestInit).body))).toEqual({ reason: "ECC errors" });
  });

  it("isolate offers Drain first, which shows the drain's plan", async () => {
    const plan: DrainPlan = {
      cluster: 1, scope: "chip", node: chip.node, chips: [{ id: 5, uuid: chip.uuid, index: 2, common_word: chip.type, state: "unhealthy" }],
      drain: null, needs_approval: true,
      pods: [{
        namespace: "team", pod: "train-1", node: chip.node, chips: [chip.uuid], templates: ["vir05_1c_8g"], memory: 8192, priority: 0,
        priority_class: "", foreign: true, request: null, request_queue: null, pdbs: [{ name: "train-pdb", disruptions_allowed: 0 }],
        outcome: "evicted once an admin approves",
      }],
    };
    stubFetch((url) => {
      if (url === "/api/chips/5/drain/") return { body: plan };
      if (url.includes("node-config/health")) return { body: health(true) };
      if (url.startsWith("/api/chips/5/")) return { body: detail() };
      return undefined;
    });
    renderAs("operator", <ChipActions chip={chip} slices={[slice]} clusterId={1} />);
    fireEvent.click(screen.getByTestId("chip-act-isolate"));
    fireEvent.click(screen.getByTestId("isolate-drain-first"));
    await waitFor(() => expect(screen.getByTestId("drain-plan-pods").textContent).toContain("train-pdb"));
    expect(screen.getByTestId("drain-needs-approval")).toBeTruthy();
    expect(screen.getByTestId("drain-plan-pods").textContent).toContain("evicted once an admin approves");
  });

  it("a pending isolation shows what the portal saw, and a warning once overdue", async () => {
    stubFetch((url) =>
      url.startsWith("/api/chips/5/")
        ? {
            body: detail({
              state: "isolating", isolation: "isolating", isolation_by: "alice", isolation_reason: "ECC", isolation_since: "2026-12-01T00:00:00Z",
              isolation_seen: "the node still registers the chip", isolation_overdue: true,
            }),
          }
        : undefined,
    );
    renderAs("operator", <ChipActions chip={{ ...chip, state: "isolating" }} slices={[]} clusterId={1} />);
    await waitFor(() => expect(screen.getByTestId("chip-isolation-seen").textContent).toContain("still registers"));
    expect(screen.getByTestId("chip-isolation").textContent).toContain("by alice");
    expect(screen.getByTestId("chip-isolation-overdue")).toBeTruthy();
    expect(screen.getByTestId("chip-act-restore")).toBeTruthy();
  });

  it("uncordon posts the reason and says the result", async () => {
    const fetch = stubFetch((url, init) => {
      if (url === "/api/chips/5/uncordon/" && init.method === "POST") return { body: [detail({ state: "healthy" })] };
      if (url.startsWith("/api/chips/5/")) return { body: detail({ state: "drained", cordoned: true, drain: 9 }) };
      if (url === "/api/drains/9/") return { body: { id: 9, state: "drained", progress: "", victims: [] } };
      return { body: page([]) };
    });
    renderAs("operator", <ChipActions chip={{ ...chip, state: "drained", cordoned: true }} slices={[]} clusterId={1} />);
    await waitFor(() => expect(screen.getByTestId("chip-drain").textContent).toContain("Drain #9: drained"));
    fireEvent.click(screen.getByTestId("chip-act-uncordon"));
    fireEvent.click(screen.getByTestId("uncordon-submit"));
    expect(screen.getByText("A reason is required.")).toBeTruthy();
    fireEvent.change(screen.getByTestId("uncordon-reason"), { target: { value: "repaired" } });
    fireEvent.click(screen.getByTestId("uncordon-submit"));
    await waitFor(() => expect(screen.getByTestId("chip-act-result").textContent).toContain("back in service"));
    expect(fetch.mock.calls.some(([url]) => url === "/api/chips/5/uncordon/")).toBe(true);
  });

  it("speaks Chinese: where the chip stands, its acts, the restore dialog with its marked words, the drain it is in", async () => {
    stubFetch((url) => {
      if (url === "/api/drains/9/") return { body: { id: 9, state: "drained", progress: "", victims: [] } };
      if (url.startsWith("/api/chips/5/"))
        return {
          body: detail({
            state: "isolating", isolation: "isolating", isolation_by: "alice", isolation_reason: "ECC", isolation_since: "2026-12-01T00:00:00Z",
            isolation_overdue: true, drain: 9,
          }),
        };
      return undefined;
    });
    renderAs(
      "operator",
      <I18nProvider locale="zh-CN">
        <ChipActions chip={{ ...chip, state: "isolating" }} slices={[]} clusterId={1} />
      </I18nProvider>,
    );
    const standing = await screen.findByTestId("chip-isolation");
    expect(standing.querySelector("b")!.textContent).toBe("隔离中…");
    expect(standing.textContent).toMatch(/自 .+前起 由 alice 发起：ECC/);
    expect(screen.getByTestId("chip-isolation-overdue").textContent).toContain("已超时：");
    await waitFor(() => expect(screen.getByTestId("chip-drain").textContent).toContain("排空 #9：已排空"));
    expect(screen.getByTestId("chip-drain").textContent).toContain("在排空页面打开");
    expect(screen.getByTestId("chip-act-restore").textContent).toBe("恢复");
    expect(screen.getByTestId("chip-act-drain").textContent).toBe("排空");
    fireEvent.click(screen.getByTestId("chip-act-restore"));
    const dialog = screen.getByTestId("restore-submit").closest("[role=dialog]") ?? document.body;
    expect(dialog.textContent).toContain("恢复 npu-node-910b-01 · Ascend910B4 #2");
    expect(dialog.querySelector(".mono")!.textContent).toBe("filterDevices");
    expect([...dialog.querySelectorAll("p b")].map((b) => b.textContent)).toEqual(["恢复中"]);
    expect(document.body.textContent).not.toMatch(/isolating|Restore|since|Overdue/);
  });
});

describe("DrainPlanView", () => {
  const plan: DrainPlan = {
    cluster: 1, scope: "node", node: chip.node, chips: [1, 2].map((id) => ({ id, uuid: `U-${id}`, index: id, common_word: chip.type, state: "healthy" })),
    drain: 3, needs_approval: true,
    pods: [{
      namespace: "team", pod: "train-1", node: chip.node, chips: ["U-1"], templates: [], memory: 21527, priority: 5,
      priority_class: "", foreign: true, request: null, request_queue: null, pdbs: [{ name: "train-pdb", disruptions_allowed: 2 }],
      outcome: "evicted once an admin approves",
    }],
  };

  it("words the plan in English with the chips counted", () => {
    render(<DrainPlanView plan={plan} />);
    expect(screen.getByTestId("drain-plan").textContent).toContain(`Cordons 2 chips of ${chip.node} at once`);
    expect(screen.getByTestId("drain-plan").textContent).toContain("drain #3");
    expect(screen.getByTestId("drain-plan-pods").textContent).toContain("2 allowed");
    expect(drainSummary({ id: 3, state: "pending", progress: "", victims: [{ foreign: true, approved: false }] } as never)).toBe(
      "Drain #3: pending (foreign pods wait for an admin's approval)",
    );
  });

  it("speaks Chinese, with the pods' outcome as the API words it", async () => {
    render(
      <I18nProvider locale="zh-CN">
        <DrainPlanView plan={{ ...plan, chips: plan.chips.slice(0, 1) }} />
      </I18nProvider>,
    );
    const text = (await screen.findByTestId("drain-plan")).textContent ?? "";
    expect(text).toContain("立即禁止调度此芯片");
    expect(text).toContain("已有进行中的排空占用这些芯片：排空 #3。");
    expect(screen.getByRole("link", { name: "排空 #3" }).getAttribute("href")).toBe("/drains?drain=3");
    const pods = screen.getByTestId("drain-plan-pods").textContent ?? "";
    expect(pods).toContain("优先级 5");
    expect(pods).toContain("整卡");
    expect(pods).toContain("外部");
    expect(pods).toContain("允许 2 个");
    expect(pods).toContain("evicted once an admin approves");
    expect(text).not.toMatch(/Cordons|whole card|allowed|foreign/);
    expect(drainSummary({ id: 3, state: "pending", progress: "", victims: [{ foreign: true, approved: false }] } as never)).toBe(
      "排空 #3：等待中（外部 Pod 等待管理员批准）",
    );
  });
});
