import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import type { AuditEvent } from "../api/types";
import { I18nProvider } from "../i18n/I18nProvider";
import { loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { AuditPage, jsonDiff } from "./Audit";
import { page, renderAs, stubFetch } from "./testing";

const events: AuditEvent[] = [
  {
    id: 2,
    created_at: "2026-12-02T11:55:00Z",
    cluster: 1,
    actor_name: "alice",
    action: "queue.update",
    object_type: "queue",
    object_id: "4",
    object_repr: "ci",
    reason: "more room for the nightly run",
    before: { slots_limit: 2 },
    after: { slots_limit: 4 },
  },
  { id: 1, created_at: "2026-12-02T10:00:00Z", cluster: 1, actor_name: "", action: "cluster.create", object_type: "cluster", object_id: "1", object_repr: "", reason: "", before: null, after: null },
];

afterEach(async () => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", await loadMessages("en")));
});

describe("AuditPage", () => {
  it("lists the events with who, what and why, and shows a change as a diff", async () => {
    const fetch = stubFetch(() => ({ body: page(events) }));
    renderAs("viewer", <AuditPage />);
    const table = await screen.findByTestId("audit-table");
    expect([...table.querySelectorAll("th")].map((th) => th.textContent)).toEqual(["When", "Who", "Action", "Object", "Cluster", "Reason", ""]);
    expect(screen.getByText("2 events")).toBeTruthy();
    expect(table.textContent).toContain("cluster 1"); // no object_repr: type and id
    expect(String(fetch.mock.calls[0][0])).toContain("cluster=1");
    fireEvent.click(screen.getByText("Changes"));
    expect(screen.getByTestId("diff").textContent).toContain('+  "slots_limit": 4');
    expect(screen.getByText("Hide")).toBeTruthy();
  });

  it("speaks Chinese: headings, filters, counts and buttons come from the catalogs", async () => {
    stubFetch(() => ({ body: page(events) }));
    renderAs(
      "viewer",
      <I18nProvider locale="zh-CN">
        <AuditPage />
      </I18nProvider>,
    );
    const table = await screen.findByTestId("audit-table");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("审计日志");
    expect(screen.getByText("2 条事件")).toBeTruthy();
    expect([...table.querySelectorAll("th")].map((th) => th.textContent)).toEqual(["时间", "操作人", "操作", "对象", "集群", "原因", ""]);
    expect(screen.getByRole("option", { name: "全部对象" })).toBeTruthy();
    expect(screen.getByRole("option", { name: "设备配置版本" })).toBeTruthy();
    expect(screen.getByRole("option", { name: "当前集群" })).toBeTruthy();
    fireEvent.click(screen.getByText("变更"));
    await waitFor(() => expect(screen.getByText("收起")).toBeTruthy());
    expect(document.body.textContent).not.toContain("Changes");
    expect(document.body.textContent).not.toContain("Audit log");
  });
});

describe("jsonDiff", () => {
  it("keeps equal lines and marks what was taken away and added", () => {
    const lines = jsonDiff({ a: 1, b: 2 }, { a: 1, b: 3 }).split("\n");
    expect(lines).toHaveLength(5);
    expect(lines.slice(0, 2)).toEqual([" {", '   "a": 1,']);
    expect(lines).toContain('-  "b": 2');
    expect(lines).toContain('+  "b": 3');
    expect(jsonDiff(null, { a: 1 })).toBe('+{\n+  "a": 1\n+}');
  });
});
