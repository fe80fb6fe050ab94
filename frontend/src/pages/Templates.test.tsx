import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { TemplatesPage } from "./Templates";
import { page, renderAs, stubFetch } from "./testing";

const chipType = {
  id: 2,
  cluster: 1,
  common_word: "Ascend310P",
  chip_name: "310P3",
  resource_name: "huawei.com/Ascend310P",
  memory_allocatable: 21527,
  memory_capacity: 24576,
  ai_core: 8,
  ai_cpu: 7,
  templates: [{ name: "vir01" }],
  slots_per_chip: 7,
  allowed_template_names: ["vir01"],
};
const template = { id: 3, chip_type: 2, cluster: 1, common_word: "Ascend310P", name: "vir01", memory: 3072, ai_core: 1, ai_cpu: 1, extra: {} };
const version = (id: number, number: number, source: string) => ({
  id,
  cluster: 1,
  number,
  shape: "list",
  source,
  author: "ops",
  reason: "r",
  sha256: "",
  resource_version: "1",
  created_at: "2026-12-01T10:00:00Z",
});

function serve() {
  stubFetch((url) => {
    if (url.startsWith("/api/chip-types/")) return { body: page([chipType]) };
    if (url.startsWith("/api/templates/")) return { body: page([template]) };
    if (url.includes("/device-config/"))
      return { body: { yaml: "", base_version: 2, diff_from_base: "+ x\n", errors: [{ message: "bad" }], warnings: [], shape_warnings: [] } };
    if (url.includes("/what-if/")) return { body: { valid: true, errors: [], chip_types: [], removed_chip_types: [], invalid_slices: [], already_invalid_slices: [], overbooked_chips: [] } };
    if (url.includes("/drift/")) return { body: { in_sync: false, baseline_version: 2, diff: "", unpublished: "" } };
    if (url.startsWith("/api/device-config-versions/?")) return { body: page([version(11, 2, "published"), version(10, 1, "imported")]) };
    if (url.includes("/diff/")) return { body: { diff: "" } };
    return undefined;
  });
}

beforeEach(() => window.history.replaceState(null, "", "/templates"));
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("TemplatesPage", () => {
  it("shows the head, badges, tabs and chip types in English", async () => {
    serve();
    renderAs("viewer", <TemplatesPage />);
    expect((await screen.findByTestId("chip-type-Ascend310P")).textContent).toBe("Ascend310P310P3 · 1 template · 7 slots");
    expect(screen.getByText("device config v2 · demo")).toBeTruthy();
    expect(screen.getByText("1 error")).toBeTruthy();
    expect(screen.getByTestId("tab-publish").textContent).toBe("Publish •");
  });

  it("speaks Chinese: head, badges, tabs, chip types and the history tab", async () => {
    serve();
    renderAs(
      "viewer",
      <I18nProvider locale="zh-CN">
        <TemplatesPage />
      </I18nProvider>,
    );
    expect((await screen.findByTestId("chip-type-Ascend310P")).textContent).toBe("Ascend310P310P3 · 1 个模板 · 7 个槽位");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("模板");
    expect(screen.getByText("设备配置 v2 · demo")).toBeTruthy();
    expect(screen.getByText("1 个错误")).toBeTruthy();
    expect(screen.getByText("有未发布的更改")).toBeTruthy();
    await waitFor(() => expect(screen.getByText("漂移：ConfigMap 被手动修改")).toBeTruthy());
    expect(screen.getByTestId("tab-edit").textContent).toBe("编辑");
    expect(screen.getByTestId("tab-publish").textContent).toBe("发布 •");
    expect(screen.getByText("您的角色可以查看模板；运维负责编辑和发布。")).toBeTruthy();
    fireEvent.click(screen.getByTestId("tab-history"));
    expect(await screen.findByText("版本")).toBeTruthy();
    expect(screen.getByText("选择 A 和 B 进行比较")).toBeTruthy();
    await waitFor(() => expect(screen.getByText("两个版本完全相同。")).toBeTruthy());
    expect(document.body.textContent).not.toContain("choose A and B");
  });
});
