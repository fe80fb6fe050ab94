import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import type { ChipType } from "../api/types";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { SubmitRequestPage } from "./SubmitRequest";
import { page, renderAs, stubFetch } from "./testing";

const chipType = {
  id: 2,
  cluster: 1,
  common_word: "Ascend310P",
  templates: [
    { name: "vir01", memory: 3072, ai_core: 1, ai_cpu: 1 },
    { name: "vir02", memory: 6144, ai_core: 2, ai_cpu: 2 },
  ],
} as unknown as ChipType;

function routes(post: { status: number; body: unknown }) {
  return stubFetch((url, init) => {
    if (init.method === "POST") return post;
    if (url.startsWith("/api/chip-types/")) return { body: page([chipType]) };
    if (url.startsWith("/api/queues/")) return { body: page([{ id: 1, name: "ci" }]) };
    if (url.startsWith("/api/priority-classes/")) return { body: page([{ id: 1, name: "high", value: 1000 }]) };
    return undefined;
  });
}

/**
 * The chip types have loaded and the form has taken the first one. The select
 * shows its first option as soon as the options arrive, a render before the
 * form's own state follows (and Submit is enabled), so wait for the button.
 */
async function formReady() {
  await waitFor(() => expect(screen.getByTestId("submit-request")).toHaveProperty("disabled", false), { timeout: 5000 });
  expect(screen.getByTestId("submit-chip-type")).toHaveProperty("value", "Ascend310P");
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  window.history.replaceState(null, "", "/");
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("SubmitRequestPage", () => {
  it("is for operators and admins: ci and viewers are told to use the API", () => {
    routes({ status: 201, body: {} });
    renderAs("ci", <SubmitRequestPage />);
    expect(screen.getByTestId("operators-only").textContent).toContain("API token");
  });

  it("posts a template request and opens its detail", async () => {
    const fetch = routes({ status: 201, body: { id: 42 } });
    renderAs("operator", <SubmitRequestPage />);
    await formReady();
    fireEvent.click(screen.getByText("Template"));
    const template = await screen.findByTestId("submit-template");
    expect(template.textContent).toContain("vir02");
    fireEvent.change(template, { target: { value: "vir02" } });
    fireEvent.change(screen.getByTestId("submit-namespace"), { target: { value: "ci" } });
    fireEvent.change(screen.getByTestId("submit-queue"), { target: { value: "ci" } });
    fireEvent.change(screen.getByTestId("submit-priority"), { target: { value: "high" } });
    fireEvent.change(screen.getByTestId("submit-image"), { target: { value: "busybox" } });
    fireEvent.change(screen.getByTestId("submit-command"), { target: { value: 'sh -c "sleep 30"' } });
    fireEvent.click(screen.getByTestId("submit-request"));
    await waitFor(() => expect(window.location.pathname).toBe("/requests/42"), { timeout: 5000 });
    const post = fetch.mock.calls.find(([, init]) => (init as RequestInit)?.method === "POST")!;
    expect(post[0]).toBe("/api/requests/");
    expect(JSON.parse(String((post[1] as RequestInit).body))).toEqual({
      cluster: "1",
      namespace: "ci",
      queue: "ci",
      chip_type: "Ascend310P",
      template: "vir02",
      priority: "high",
      workload: { image: "busybox", command: ["sh", "-c", "sleep 30"] },
    });
  });

  it("shows the API's 400 on its fields", async () => {
    routes({
      status: 400,
      body: { code: "invalid", message: "Invalid.", errors: { namespace: ['namespace "nope" does not exist in the cluster'], "workload.image": ["This field may not be blank."] } },
    });
    renderAs("admin", <SubmitRequestPage />);
    await formReady();
    fireEvent.click(screen.getByTestId("submit-request"));
    await waitFor(() => expect(screen.getByText('namespace "nope" does not exist in the cluster')).toBeTruthy(), { timeout: 5000 });
    expect(screen.getByText("This field may not be blank.")).toBeTruthy();
    expect(window.location.pathname).toBe("/");
  });

  it("speaks Chinese: the labels, the size choices and their hints", async () => {
    routes({ status: 201, body: {} });
    renderAs(
      "operator",
      <I18nProvider locale="zh-CN">
        <SubmitRequestPage />
      </I18nProvider>,
    );
    await formReady();
    const form = screen.getByTestId("submit-form");
    for (const word of ["提交申请", "命名空间", "队列", "芯片类型", "优先级", "显存", "整卡", "镜像", "命令", "HAMi 的模板规则会选择能容纳的最小模板。"])
      expect(form.parentElement!.textContent).toContain(word);
    expect(screen.getByTestId("submit-request").textContent).toBe("提交");
    expect(form.textContent).not.toContain("Chip type");
    fireEvent.click(screen.getByText("整卡"));
    expect(form.textContent).toContain("整个芯片，不切分。");
  });

  it("tells ci and viewers in Chinese to use the API", () => {
    routes({ status: 201, body: {} });
    renderAs(
      "ci",
      <I18nProvider locale="zh-CN">
        <SubmitRequestPage />
      </I18nProvider>,
    );
    return waitFor(() => expect(screen.getByTestId("operators-only").textContent).toContain("API 令牌"));
  });
});
