import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, screen, within } from "@testing-library/react";
import type { CiRequest } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { RequestsPage } from "./Requests";
import { page, renderAs, stubFetch } from "./testing";

const request = {
  id: 7,
  cluster: 1,
  state: "running",
  queue: "ci",
  position: null,
  namespace: "team-a",
  chip_type: "Ascend310P",
  memory: null,
  template: "",
  whole_card: true,
  template_booked: "",
  memory_booked: 21527,
  priority: "high",
  priority_value: 1000,
  chip_uuid: null,
  node: "node-a",
  pod_name: "ci-7-x",
  reason: "",
  submitted_by: "otto",
  created_at: "2026-01-01T10:00:00Z",
  running_at: "2026-01-01T10:00:05Z",
  finished_at: null,
} as unknown as CiRequest;

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("RequestsPage", () => {
  it("lists the requests in English", async () => {
    stubFetch((url) => (url.startsWith("/api/requests/") ? { body: page([request]) } : undefined));
    renderAs("operator", <RequestsPage />);
    const row = await screen.findByTestId("request-7");
    expect(row.textContent).toContain("running");
    expect(row.textContent).toContain("whole card");
    expect(row.textContent).toContain("Ascend310P in team-a");
    expect(screen.getByText("1 request")).toBeTruthy();
    expect(screen.getByTestId("request-new").textContent).toBe("Submit a request");
  });

  it("speaks Chinese: the head, the columns, the state and what was asked", async () => {
    stubFetch((url) => (url.startsWith("/api/requests/") ? { body: page([request]) } : undefined));
    renderAs(
      "operator",
      <I18nProvider locale="zh-CN">
        <RequestsPage />
      </I18nProvider>,
      "otto",
    );
    const row = await screen.findByTestId("request-7");
    expect(within(row).getByText("运行中")).toBeTruthy();
    expect(row.textContent).toContain("整卡");
    expect(row.textContent).toContain("team-a 中的 Ascend310P");
    expect(row.textContent).toContain("取消");
    expect(screen.getByText("1 个申请")).toBeTruthy();
    expect(screen.getByTestId("request-new").textContent).toBe("提交申请");
    const head = screen.getByTestId("requests-table").querySelector("thead")!.textContent!;
    for (const word of ["状态", "队列", "申请规格", "预留规格", "优先级", "原因", "创建时间"]) expect(head).toContain(word);
    expect(head).not.toContain("Created");
    const states = screen.getByTestId("request-state");
    expect(states.textContent).toContain("全部状态");
    expect(states.textContent).toContain("已预留");
    const created = row.querySelector("td[title^='创建于']")!;
    expect(created.getAttribute("title")).toMatch(/^创建于 2026\/01\/01 \d\d:00:00，运行于 2026\/01\/01 \d\d:00:05$/);
  });
});
