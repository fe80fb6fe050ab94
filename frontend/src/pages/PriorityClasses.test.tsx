import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, screen } from "@testing-library/react";
import type { Page, PriorityClass } from "../api/types";
import { I18nProvider } from "../i18n/I18nProvider";
import { loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { PriorityClassesPage } from "./PriorityClasses";
import { renderAs } from "./testing";

function pc(name: string, value: number, extra: Partial<PriorityClass> = {}): PriorityClass {
  return { id: value, cluster: 1, name, value, global_default: false, preemption_policy: "PreemptLowerPriority", description: `${name} jobs`, ...extra };
}

afterEach(async () => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", await loadMessages("en")));
});

function renderPage(classes: PriorityClass[], locale?: "zh-CN") {
  const body: Page<PriorityClass> = { count: classes.length, next: null, previous: null, results: classes };
  const fetch = vi.fn(async () => new Response(JSON.stringify(body), { status: 200 }));
  vi.stubGlobal("fetch", fetch);
  renderAs("viewer", locale ? <I18nProvider locale={locale}><PriorityClassesPage /></I18nProvider> : <PriorityClassesPage />);
  return fetch;
}

describe("PriorityClassesPage", () => {
  it("lists the cluster's classes highest value first", async () => {
    const fetch = renderPage([pc("batch-low", 100), pc("inference-high", 100000), pc("system-node-critical", 2000001000), pc("batch-medium", 1000)]);
    await screen.findByTestId("priority-classes");
    expect((fetch.mock.calls[0] as unknown as [string])[0]).toBe("/api/priority-classes/?cluster=1&page_size=1000");
    const names = screen.getAllByRole("row").slice(1).map((r) => r.getAttribute("data-testid"));
    expect(names).toEqual(["priority-system-node-critical", "priority-inference-high", "priority-batch-medium", "priority-batch-low"]);
    expect(screen.getByTestId("priority-inference-high").textContent).toContain("100,000");
    expect(screen.getByTestId("priority-batch-low").textContent).toContain('"priority": "batch-low"');
    expect(screen.getByTestId("priority-system-node-critical").textContent).toContain("meant for cluster components");
  });
  it("marks Never as never preempts, and the global default as what a request without priority gets", async () => {
    renderPage([pc("low", 10, { preemption_policy: "Never" }), pc("normal", 500, { global_default: true })]);
    await screen.findByTestId("priority-classes");
    expect(screen.getByTestId("priority-low").textContent).toContain("never preempts");
    expect(screen.getByTestId("priority-normal").textContent).not.toContain("never preempts");
    expect(screen.getByTestId("priority-normal").textContent).toContain("global default");
    expect(screen.getByTestId("priority-default").textContent).toContain("it gets the global default, normal.");
  });
  it("says a request must name a class when the cluster has no global default", async () => {
    renderPage([pc("batch-low", 100)]);
    await screen.findByTestId("priority-classes");
    expect(screen.getByTestId("priority-default").textContent).toContain("a request must name one");
  });
  it("speaks Chinese, keeping names and the request's field as they are", async () => {
    renderPage([pc("low", 10, { preemption_policy: "Never" }), pc("normal", 500, { global_default: true }), pc("system-node-critical", 2000001000)], "zh-CN");
    await screen.findByTestId("priority-classes");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("PriorityClass");
    expect(screen.getByText("3 个 PriorityClass")).toBeTruthy();
    expect(screen.getByTestId("priority-low").textContent).toContain("从不抢占");
    expect(screen.getByTestId("priority-normal").textContent).toContain("全局默认");
    expect(screen.getByTestId("priority-system-node-critical").textContent).toContain("供集群组件使用");
    const note = screen.getByTestId("priority-default");
    expect(note.textContent).toContain("未指定 priority 时使用全局默认值 normal。");
    expect(note.querySelector("b")?.textContent).toBe("normal");
    expect(note.querySelector("code")?.textContent).toBe("priority");
    expect(screen.getByRole("columnheader", { name: "抢占" })).toBeTruthy();
    expect(document.body.textContent).not.toContain("global default");
  });
});
