import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, screen } from "@testing-library/react";
import type { Page, PriorityClass } from "../api/types";
import { PriorityClassesPage } from "./PriorityClasses";
import { renderAs } from "./testing";

function pc(name: string, value: number, extra: Partial<PriorityClass> = {}): PriorityClass {
  return { id: value, cluster: 1, name, value, global_default: false, preemption_policy: "PreemptLowerPriority", description: `${name} jobs`, ...extra };
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function renderPage(classes: PriorityClass[]) {
  const body: Page<PriorityClass> = { count: classes.length, next: null, previous: null, results: classes };
  const fetch = vi.fn(async () => new Response(JSON.stringify(body), { status: 200 }));
  vi.stubGlobal("fetch", fetch);
  renderAs("viewer", <PriorityClassesPage />);
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
});
