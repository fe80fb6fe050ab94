import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { Me, Page, PreemptionProposal, Role } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { ClusterContext } from "../state/cluster";
import { allows, SessionContext } from "../state/session";
import { DecisionForm, PreemptionsPage } from "./Preemptions";
import { testCluster } from "./testing";

const cluster = testCluster;

const proposal: PreemptionProposal = {
  id: 7,
  cluster: 1,
  request: 3,
  request_namespace: "ci",
  request_queue: "default",
  request_priority: 1000,
  request_priority_class: "high",
  request_state: "pending",
  chip: 1,
  chip_uuid: "U1",
  node: "node-a",
  template: "vir02",
  memory: 6144,
  aicore: 2,
  aicpu: 1,
  state: "pending",
  victims: [{ namespace: "batch", pod: "job-1", priority: 0, lost_seconds: 3720 }],
  lost_seconds: 3720,
  max_victim_priority: 0,
  crosses_queues: ["batch"],
  caveat: "",
  auto_approved: false,
  progress: "",
  reason: "",
  decided_by: null,
  decided_at: null,
  next_attempt_at: null,
  created_at: "2026-12-02T12:00:00Z",
  updated_at: "2026-12-02T12:00:00Z",
};

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

function renderPage(role: Role, shown: PreemptionProposal = proposal, locale?: "zh-CN") {
  const body: Page<PreemptionProposal> = { count: 1, next: null, previous: null, results: [shown] };
  vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify(body), { status: 200 })));
  const me: Me = { username: "u", role } as Me;
  const session = { me, logout: async () => {}, can: (n: Role) => allows(role, n) };
  const value = { clusters: [cluster], cluster, select: () => {}, live: null, reloadClusters: () => {}, retry: () => {} };
  return render(
    <SessionContext.Provider value={session}>
      <ClusterContext.Provider value={value}>
        {locale ? (
          <I18nProvider locale={locale}>
            <PreemptionsPage />
          </I18nProvider>
        ) : (
          <PreemptionsPage />
        )}
      </ClusterContext.Provider>
    </SessionContext.Provider>,
  );
}

describe("PreemptionsPage", () => {
  it("shows victims with the time they lose, and Approve/Reject to admins", async () => {
    renderPage("admin");
    await screen.findByTestId("proposal-7");
    expect(screen.getByText("batch/job-1")).toBeTruthy();
    expect(screen.getByText(/loses 1h 2m/)).toBeTruthy();
    expect(screen.getByTestId("approve-7")).toBeTruthy();
    expect(screen.getByTestId("reject-7")).toBeTruthy();
  });
  it("says when the victims are in another queue", async () => {
    renderPage("admin");
    await screen.findByTestId("proposal-7");
    expect(screen.getByTestId("crosses-7").textContent).toContain("victims in batch");
  });
  it("says what is not guaranteed once the victims are gone, and nothing when all is", async () => {
    renderPage("admin", { ...proposal, caveat: "not guaranteed: Volcano picks the chip on node node-a and may pick chip 5, which is unhealthy" });
    const caveat = await screen.findByTestId("caveat-7");
    expect(caveat.textContent).toContain("not guaranteed");
    expect(caveat.textContent).toContain("may pick chip 5, which is unhealthy");
    cleanup();
    renderPage("admin");
    await screen.findByTestId("proposal-7");
    expect(screen.queryByTestId("caveat-7")).toBeNull();
  });
  it("speaks Chinese: the table, the state, what the victims lose, the decision", async () => {
    renderPage("admin", { ...proposal, auto_approved: true, decided_by: "alice" }, "zh-CN");
    const row = await screen.findByTestId("proposal-7");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("抢占");
    expect(document.body.textContent).toContain("1 个提议");
    expect(screen.getByRole("columnheader", { name: "被抢占者" })).toBeTruthy();
    expect(row.textContent).toContain("ci · default · 优先级 1000");
    expect(row.textContent).toContain("等待中");
    expect(row.textContent).toContain("自动");
    expect(row.textContent).toContain("由 alice");
    expect(row.textContent).toContain("优先级 0 · 损失 1小时2分钟");
    expect(screen.getByTestId("crosses-7").textContent).toContain("跨队列");
    expect(screen.getByTestId("crosses-7").textContent).toContain("被抢占者位于 batch");
    fireEvent.click(screen.getByTestId("approve-7"));
    expect(document.body.textContent).toContain("批准提议 #7");
    expect(screen.getByTestId("decision-submit").textContent).toBe("批准");
    const states = screen.getByTestId("proposal-state") as HTMLSelectElement;
    expect([...states.options].map((o) => o.textContent)).toContain("已被取代");
    expect(screen.getByTestId("preemptions-table").textContent).not.toMatch(/Approve|Reject|pending|loses|prio|crosses queues|victims in|auto|by alice/);
  });
  it("shows no buttons to operators", async () => {
    renderPage("operator");
    await screen.findByTestId("proposal-7");
    expect(screen.queryByTestId("approve-7")).toBeNull();
    expect(screen.queryByTestId("reject-7")).toBeNull();
  });
});

describe("DecisionForm", () => {
  it("requires a reason before posting", () => {
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    render(<DecisionForm proposal={{ id: 7 }} decision="approve" onClose={() => {}} onDone={() => {}} />);
    fireEvent.click(screen.getByTestId("decision-submit"));
    expect(screen.getByText("A reason is required.")).toBeTruthy();
    expect(fetch).not.toHaveBeenCalled();
  });
  it("posts {reason} and shows the API's error", async () => {
    const fetch = vi.fn(
      async () => new Response(JSON.stringify({ code: "conflict", message: "The proposal is no longer pending." }), { status: 409 }),
    );
    vi.stubGlobal("fetch", fetch);
    const onDone = vi.fn();
    render(<DecisionForm proposal={{ id: 7 }} decision="reject" onClose={() => {}} onDone={onDone} />);
    fireEvent.change(screen.getByTestId("decision-reason"), { target: { value: " not now " } });
    fireEvent.click(screen.getByTestId("decision-submit"));
    await waitFor(() => expect(screen.getByTestId("decision-error").textContent).toContain("no longer pending"));
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/preemptions/7/reject/");
    expect(JSON.parse(String(init.body))).toEqual({ reason: "not now" });
    expect(onDone).not.toHaveBeenCalled();
  });
  it("puts a reason error from the API on the field", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => new Response(JSON.stringify({ code: "invalid", message: "Invalid.", errors: { reason: ["Too short."] } }), { status: 400 })),
    );
    render(<DecisionForm proposal={{ id: 7 }} decision="approve" onClose={() => {}} onDone={() => {}} />);
    fireEvent.change(screen.getByTestId("decision-reason"), { target: { value: "x" } });
    fireEvent.click(screen.getByTestId("decision-submit"));
    await waitFor(() => expect(screen.getByText("Too short.")).toBeTruthy());
  });
});
