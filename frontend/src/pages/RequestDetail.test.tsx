import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, screen, waitFor } from "@testing-library/react";
import type { CiRequest } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { RequestDetailPage } from "./RequestDetail";
import { page, renderAs, stubFetch } from "./testing";

const request: CiRequest = {
  id: 9,
  cluster: 1,
  cluster_name: "demo",
  workload: {},
  pod_template: null,
  time_limit_seconds: null,
  idempotency_key: "",
  allow_preemption: false,
  expires_at: null,
  exit_code: null,
  result: null,
  state: "admitted",
  queue: "ci",
  position: null,
  namespace: "ci",
  chip_type: "Ascend310P",
  memory: 3072,
  template: "",
  whole_card: false,
  template_booked: "vir01",
  memory_booked: 3072,
  priority: "",
  priority_value: 0,
  chip: null,
  chip_uuid: null,
  on_unhealthy_chip: false,
  pod_failures: [],
  node: "node-a",
  pod_name: "ci-9-x",
  reason: "",
  submitted_by: "otto",
  created_at: "2026-01-01T10:00:00Z",
  reserved_at: "2026-01-01T10:00:02Z",
  admitted_at: "2026-01-01T10:00:03Z",
  running_at: null,
  finished_at: null,
  updated_at: "2026-01-01T10:00:03Z",
  attempts: 2,
};

function routes(r: CiRequest, extra: Record<string, unknown> = {}) {
  return stubFetch((url) => {
    if (url === `/api/requests/${r.id}/`) return { body: r };
    for (const [prefix, body] of Object.entries(extra)) if (url.startsWith(prefix)) return { body };
    return undefined;
  });
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("RequestDetailPage", () => {
  it("shows the timeline so far, the node, and why the chip is not known before the bind", async () => {
    routes(request, {
      "/api/pending-pods/": page([{ id: 1, name: "ci-9-x", reason: "0/2 nodes are available: 2 Insufficient huawei.com/Ascend310P" }]),
    });
    renderAs("operator", <RequestDetailPage id={9} />);
    expect((await screen.findByTestId("detail-state")).textContent).toBe("admitted");
    expect(screen.getByTestId("step-submitted").dataset.done).toBe("yes");
    expect(screen.getByTestId("step-reserved").dataset.done).toBe("yes");
    expect(screen.getByTestId("step-admitted").dataset.done).toBe("yes");
    expect(screen.getByTestId("step-running").dataset.done).toBe("no");
    expect(screen.getByTestId("detail-node").textContent).toBe("node-a");
    expect(screen.getByTestId("detail-chip").textContent).toMatch(/Volcano/);
    expect(screen.getByTestId("detail-attempts").textContent).toBe("2");
    await waitFor(() => expect(screen.getByTestId("detail-scheduler-reason").textContent).toContain("Insufficient"));
  });

  it("says when it runs on a chip reported unhealthy, and how to move it", async () => {
    routes({ ...request, state: "running", running_at: "2026-01-01T10:00:09Z", chip_uuid: "UUID-1", chip: 3, on_unhealthy_chip: true });
    renderAs("operator", <RequestDetailPage id={9} />);
    expect((await screen.findByTestId("detail-unhealthy-chip")).textContent).toContain("Cancel it and submit it again");
  });

  it("lists the pods that failed before they ran, with their reasons", async () => {
    routes({
      ...request,
      pod_failures: [
        { pod: "vnpu-req-9", attempt: 1, chip_uuid: "UUID-1", node: "node-a", reason: "the pod failed before it ran: container main exited 128 (StartError)", at: "2026-01-01T10:00:05Z" },
        { pod: "vnpu-req-9-1", attempt: 2, chip_uuid: "", node: "", reason: "the pod was deleted before it ran", at: "2026-01-01T10:00:07Z" },
      ],
    });
    renderAs("viewer", <RequestDetailPage id={9} />);
    const panel = await screen.findByTestId("detail-pod-failures");
    const items = panel.querySelectorAll("li");
    expect(items).toHaveLength(2);
    expect(items[0].textContent).toContain("vnpu-req-9 (attempt 1)");
    expect(items[0].textContent).toContain("chip UUID-1");
    expect(items[0].textContent).toContain("StartError");
    expect(items[1].textContent).toContain("no node");
  });

  it("does not say so on a healthy chip", async () => {
    routes({ ...request, state: "running", running_at: "2026-01-01T10:00:09Z", chip_uuid: "UUID-1", chip: 3 });
    renderAs("operator", <RequestDetailPage id={9} />);
    await screen.findByTestId("detail-state");
    expect(screen.queryByTestId("detail-unhealthy-chip")).toBeNull();
  });

  it("shows the position and why it waits while pending", async () => {
    routes({ ...request, state: "pending", position: 3, reason: "queue ci is over its quota", reserved_at: null, admitted_at: null, node: "", pod_name: "" });
    renderAs("viewer", <RequestDetailPage id={9} />);
    expect((await screen.findByTestId("detail-position")).textContent).toContain("3");
    expect(screen.getByTestId("detail-reason").textContent).toContain("Why it waits: queue ci is over its quota");
  });

  it("shows the chip once running, the proposals with a link and the history", async () => {
    routes(
      { ...request, state: "running", running_at: "2026-01-01T10:00:09Z", chip_uuid: "UUID-1", chip: 3 },
      {
        "/api/preemptions/": page([{ id: 5, request: 9, state: "done", node: "node-a", victims: [{}], created_at: "2026-01-01T10:00:01Z", reason: "" }]),
        "/api/audit-events/": page([{ id: 1, action: "request.create", actor_name: "otto", created_at: "2026-01-01T10:00:00Z", reason: "" }]),
      },
    );
    renderAs("operator", <RequestDetailPage id={9} />);
    await waitFor(() => expect(screen.getByTestId("detail-chip").textContent).toContain("UUID-1"));
    expect(screen.getByTestId("step-running").dataset.done).toBe("yes");
    const link = (await screen.findByText("proposal #5")) as HTMLAnchorElement;
    expect(link.getAttribute("href")).toBe("/preemptions?request=9");
    expect((await screen.findByTestId("detail-history")).textContent).toContain("request.create by otto");
  });

  it("says when the request cannot be read", async () => {
    stubFetch(() => ({ status: 404, body: { code: "not_found", message: "Not found." } }));
    renderAs("viewer", <RequestDetailPage id={77} />);
    await waitFor(() => expect(screen.getByText("Not found.")).toBeTruthy());
  });

  it("speaks Chinese: state, position, reason, timeline and placement", async () => {
    routes(
      { ...request, state: "pending", position: 3, reason: "queue ci is over its quota", reserved_at: null, admitted_at: null, node: "", pod_name: "" },
      {
        "/api/preemptions/": page([{ id: 5, request: 9, state: "rejected", node: "node-a", victims: [{}, {}], created_at: "2026-01-01T10:00:01Z", reason: "" }]),
        "/api/audit-events/": page([{ id: 1, action: "request.create", actor_name: "otto", created_at: "2026-01-01T10:00:00Z", reason: "" }]),
      },
    );
    renderAs(
      "viewer",
      <I18nProvider locale="zh-CN">
        <RequestDetailPage id={9} />
      </I18nProvider>,
    );
    expect((await screen.findByTestId("detail-state")).textContent).toBe("等待中");
    expect(screen.getByTestId("detail-position").textContent).toBe("在队列 ci 中排第 3 位");
    expect(screen.getByTestId("detail-reason").textContent).toBe("等待原因：queue ci is over its quota");
    expect(screen.getByTestId("step-submitted").textContent).toContain("已提交");
    expect(screen.getByTestId("detail-chip").textContent).toBe("尚无芯片：申请正在其队列中等待资源。");
    expect((await screen.findByText("提议 #5")).getAttribute("href")).toBe("/preemptions?request=9");
    expect(screen.getByTestId("detail-proposals").textContent).toContain("已拒绝");
    expect(screen.getByTestId("detail-proposals").textContent).toContain("2 个被抢占者");
    expect((await screen.findByTestId("detail-history")).textContent).toContain("otto 执行了 request.create");
    const page_ = screen.getByTestId("request-detail").parentElement!.textContent!;
    expect(page_).toContain("申请 #9");
    expect(page_).toContain("分配位置");
    expect(page_).not.toContain("Timeline");
    expect(page_).not.toContain("Why it waits");
  });
});
