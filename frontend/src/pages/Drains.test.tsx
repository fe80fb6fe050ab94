import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import type { Drain } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { DrainsPage } from "./Drains";
import { page, renderAs, stubFetch } from "./testing";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

const drain = {
  id: 4, cluster: 1, scope: "chip", node: "npu-node-910b-01", chip: 5, chip_uuids: ["UUID-5"], state: "pending", reason: "ECC errors",
  requested_by: "op", decided_by: null, decided_at: null, decision_reason: "", progress: "1 foreign pod waits for approval", next_attempt_at: null,
  ended_at: null, created_at: "2026-12-01T00:00:00Z", updated_at: "2026-12-01T00:00:00Z",
  victims: [{ namespace: "default", pod: "foreign-1", node: "npu-node-910b-01", chips: ["UUID-5"], templates: ["vir05"], memory: 3072, priority: 0,
    priority_class: "", foreign: true, request: null, request_queue: null, pdbs: [], outcome: "evicted once an admin approves", approved: false }],
} as unknown as Drain;

describe("DrainsPage", () => {
  it("lets admins approve a drain whose foreign pods wait, with a reason", async () => {
    const fetch = stubFetch((url, init) => {
      if (url === "/api/drains/4/approve/" && init.method === "POST") return { body: { ...drain, state: "evicting" } };
      if (url.startsWith("/api/drains/")) return { body: page([drain]) };
      return undefined;
    });
    renderAs("admin", <DrainsPage />);
    await waitFor(() => expect(screen.getByTestId("drain-4").textContent).toContain("awaits an admin"));
    expect(screen.getByTestId("drain-4").textContent).toContain("default/foreign-1");
    fireEvent.click(screen.getByTestId("approve-drain-4"));
    fireEvent.change(screen.getByTestId("decision-reason"), { target: { value: "maintenance window" } });
    fireEvent.click(screen.getByTestId("decision-submit"));
    await waitFor(() => expect(fetch.mock.calls.some(([url]) => url === "/api/drains/4/approve/")).toBe(true));
    const posted = fetch.mock.calls.find(([url]) => url === "/api/drains/4/approve/")!;
    expect(JSON.parse(String((posted[1] as RequestInit).body))).toEqual({ reason: "maintenance window" });
  });

  it("shows no decision to operators, nor on a drain with nothing to decide", async () => {
    stubFetch((url) => (url.startsWith("/api/drains/") ? { body: page([drain, { ...drain, id: 5, state: "drained" }]) } : undefined));
    renderAs("operator", <DrainsPage />);
    await waitFor(() => expect(screen.getByTestId("drain-5")).toBeTruthy());
    expect(screen.queryByTestId("approve-drain-4")).toBeNull();
    cleanup();
    renderAs("admin", <DrainsPage />);
    await waitFor(() => expect(screen.getByTestId("approve-drain-4")).toBeTruthy());
    expect(screen.queryByTestId("approve-drain-5")).toBeNull();
  });

  it("speaks Chinese: states, victims and the decision, the API's progress as it comes", async () => {
    stubFetch((url) => (url.startsWith("/api/drains/") ? { body: page([drain, { ...drain, id: 5, state: "drained", scope: "node", victims: [] }]) } : undefined));
    renderAs(
      "admin",
      <I18nProvider locale="zh-CN">
        <DrainsPage />
      </I18nProvider>,
    );
    const row = await screen.findByTestId("drain-4");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("排空");
    expect(document.body.textContent).toContain("2 个排空");
    expect(row.textContent).toContain("npu-node-910b-01 上的芯片");
    expect(row.textContent).toContain("等待中");
    expect(row.textContent).toContain("等待管理员批准");
    expect(row.textContent).toContain("外部");
    expect(row.textContent).toContain("1 foreign pod waits for approval");
    expect(screen.getByTestId("drain-5").textContent).toContain("已排空");
    expect(screen.getByTestId("drain-5").textContent).toContain("npu-node-910b-01 上的节点");
    expect(screen.getByTestId("approve-drain-4").textContent).toBe("批准");
    fireEvent.click(screen.getByTestId("reject-drain-4"));
    expect(document.body.textContent).toContain("拒绝排空 #4");
    expect(document.body.textContent).toContain("芯片保持禁止调度");
    const states = screen.getByTestId("drain-state") as HTMLSelectElement;
    expect([...states.options].map((o) => o.textContent)).toEqual(["全部状态", "等待中", "驱逐中", "已排空", "已拒绝", "失败", "已恢复调度"]);
    // the API's words (progress) aside, nothing of the table is left in English
    const table = screen.getByTestId("drains-table").textContent!.replaceAll("1 foreign pod waits for approval", "");
    expect(table).not.toMatch(/awaits|pending|drained| foreign |waiting|chip on|node on|none/);
    expect(screen.getByRole("dialog").textContent).not.toMatch(/Reject drain|evicted/);
  });
});
