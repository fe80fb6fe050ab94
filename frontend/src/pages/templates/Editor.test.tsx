import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import type { ChipType, Template } from "../../api/types";
import { ENGLISH } from "../../i18n/catalog";
import { I18nProvider } from "../../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../../i18n/intl";
import { Editor } from "./Editor";

const chipType: ChipType = {
  id: 2,
  cluster: 1,
  common_word: "Ascend310P",
  chip_name: "310P3",
  resource_name: "huawei.com/Ascend310P",
  resource_memory_name: "huawei.com/Ascend310P-memory",
  resource_core_name: "",
  memory_allocatable: 21527,
  memory_capacity: 24576,
  ai_core: 8,
  ai_cpu: 7,
  extra: {},
  templates: [],
  slots_per_chip: 7,
  allowed_template_names: ["vir01", "vir02", "vir02_1c", "vir04", "vir04_3c", "vir04_3c_ndvpp", "vir04_4c_dvpp"],
};
const tpl = (id: number, name: string, memory: number): Template => ({
  id,
  chip_type: 2,
  cluster: 1,
  common_word: "Ascend310P",
  name,
  memory,
  ai_core: memory / 3072,
  ai_cpu: memory / 3072,
  extra: {},
});
const templates = [tpl(3, "vir01", 3072), tpl(4, "vir02", 6144), tpl(5, "vir04", 12288)];

function respond(status: number, body: unknown) {
  return vi.fn(async () => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } }));
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

describe("templates editor", () => {
  it("draws how the templates fit one chip", () => {
    render(<Editor chipType={chipType} templates={templates} whatIf={undefined} canEdit onSaved={() => {}} warnings={[]} />);
    expect(screen.getByTestId("fit-slots").textContent).toBe("7");
    expect(screen.getByTestId("fit-picture").textContent).toContain("× 3");
  });

  it("updates the picture as you type", () => {
    render(<Editor chipType={chipType} templates={templates} whatIf={undefined} canEdit onSaved={() => {}} warnings={[]} />);
    const memory = screen.getByTestId("template-row-vir01").querySelector("input[name=memory]") as HTMLInputElement;
    fireEvent.change(memory, { target: { value: "2048" } });
    expect(screen.getByTestId("fit-slots").textContent).toBe("10");
  });

  it("shows the API's validation error on the field that caused it", async () => {
    const message = "Ascend310P template vir01: memory 99999 MB is more than memoryAllocatable 21527 MB";
    const fetch = respond(400, { code: "invalid", message, errors: { memory: [message] } });
    vi.stubGlobal("fetch", fetch);
    render(<Editor chipType={chipType} templates={templates} whatIf={undefined} canEdit onSaved={() => {}} warnings={[]} />);
    const row = screen.getByTestId("template-row-vir01");
    const memory = row.querySelector("input[name=memory]") as HTMLInputElement;
    fireEvent.change(memory, { target: { value: "99999" } });
    fireEvent.click(screen.getByTestId("save-template"));
    await waitFor(() => expect(screen.getByTestId("error-memory").textContent).toBe(message));
    expect(memory.className).toContain("invalid");
    const [url, init] = fetch.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/templates/3/");
    expect(init.method).toBe("PATCH");
    expect(JSON.parse(init.body as string)).toEqual({ memory: 99999 });
  });

  it("passes the warnings of a successful save up", async () => {
    const warnings = [{ field: "vnpus[1].templates[0].memory", message: "Ascend310P: 10 slices per chip", chip_type: "Ascend310P", template: "vir01", severity: "warning" }];
    vi.stubGlobal("fetch", respond(200, { ...tpl(3, "vir01", 2048), warnings }));
    const onSaved = vi.fn();
    render(<Editor chipType={chipType} templates={templates} whatIf={undefined} canEdit onSaved={onSaved} warnings={[]} />);
    const memory = screen.getByTestId("template-row-vir01").querySelector("input[name=memory]") as HTMLInputElement;
    fireEvent.change(memory, { target: { value: "2048" } });
    fireEvent.click(screen.getByTestId("save-template"));
    await waitFor(() => expect(onSaved).toHaveBeenCalledWith(warnings));
    expect(screen.getByTestId("saved").textContent).toContain("Saved template vir01");
  });

  it("suggests the template names the chip type allows, from the API's list", () => {
    render(<Editor chipType={chipType} templates={templates} whatIf={undefined} canEdit onSaved={() => {}} warnings={[]} />);
    const options = (row: HTMLElement) => {
      const input = row.querySelector("input[name=name]") as HTMLInputElement;
      const list = document.getElementById(input.getAttribute("list") ?? "");
      return [...(list?.querySelectorAll("option") ?? [])].map((o) => o.getAttribute("value"));
    };
    // an existing template: its own name and the names no other template uses
    expect(options(screen.getByTestId("template-row-vir02"))).toEqual(["vir02", "vir02_1c", "vir04_3c", "vir04_3c_ndvpp", "vir04_4c_dvpp"]);
    // a new template: only the free names
    fireEvent.click(screen.getByTestId("add-template"));
    const row = screen.getByTestId("template-row-new");
    expect(options(row)).toEqual(["vir02_1c", "vir04_3c", "vir04_3c_ndvpp", "vir04_4c_dvpp"]);
    const name = row.querySelector("input[name=name]") as HTMLInputElement;
    expect(name.placeholder).toBe("e.g. vir02_1c");
    // a name being typed elsewhere is taken at once
    fireEvent.change(screen.getByTestId("template-row-vir04").querySelector("input[name=name]") as HTMLInputElement, { target: { value: "vir04_3c" } });
    expect(options(row)).toEqual(["vir02_1c", "vir04", "vir04_3c_ndvpp", "vir04_4c_dvpp"]);
  });

  it("hints at a name the chip type does not accept before saving", () => {
    render(<Editor chipType={chipType} templates={templates} whatIf={undefined} canEdit onSaved={() => {}} warnings={[]} />);
    const row = screen.getByTestId("template-row-vir01");
    const name = row.querySelector("input[name=name]") as HTMLInputElement;
    expect(screen.queryByTestId("name-hint")).toBeNull();
    fireEvent.change(name, { target: { value: "vir03" } });
    expect(screen.getByTestId("name-hint").textContent).toContain("not a template name Ascend310P accepts");
    fireEvent.change(name, { target: { value: "vir04_3c" } });
    expect(screen.queryByTestId("name-hint")).toBeNull();
  });

  it("shows the API's error on the name field instead of the hint once saved", async () => {
    const message = "Ascend310P template vir03: vir03 is not a template name ascend-docker-runtime accepts (allowed: vir01, vir02)";
    vi.stubGlobal("fetch", respond(400, { code: "invalid", message, errors: { name: [message] } }));
    render(<Editor chipType={chipType} templates={templates} whatIf={undefined} canEdit onSaved={() => {}} warnings={[]} />);
    const row = screen.getByTestId("template-row-vir01");
    fireEvent.change(row.querySelector("input[name=name]") as HTMLInputElement, { target: { value: "vir03" } });
    fireEvent.click(screen.getByTestId("save-template"));
    await waitFor(() => expect(row.textContent).toContain(message));
    expect(screen.queryByTestId("name-hint")).toBeNull();
  });

  it("offers no names when the API lists none (a chip family it does not know)", () => {
    render(<Editor chipType={{ ...chipType, allowed_template_names: [] }} templates={templates} whatIf={undefined} canEdit onSaved={() => {}} warnings={[]} />);
    const name = screen.getByTestId("template-row-vir01").querySelector("input[name=name]") as HTMLInputElement;
    expect(name.getAttribute("list")).toBeNull();
    fireEvent.change(name, { target: { value: "anything" } });
    expect(screen.queryByTestId("name-hint")).toBeNull();
  });

  it("hides every write action from a viewer", () => {
    render(<Editor chipType={chipType} templates={templates} whatIf={undefined} canEdit={false} onSaved={() => {}} warnings={[]} />);
    expect(screen.queryByTestId("add-template")).toBeNull();
    expect(screen.queryByText("Delete")).toBeNull();
    const memory = screen.getByTestId("template-row-vir01").querySelector("input[name=memory]") as HTMLInputElement;
    expect(memory.readOnly).toBe(true);
  });

  it("speaks Chinese: headings, columns, actions, hints and the saved note", async () => {
    const warnings = [{ field: "x", message: "Ascend310P: 10 slices per chip", chip_type: "Ascend310P", template: "vir01", severity: "warning" }];
    vi.stubGlobal("fetch", respond(200, { ...tpl(3, "vir01", 2048), warnings: [] }));
    render(
      <I18nProvider locale="zh-CN">
        <Editor chipType={chipType} templates={templates} whatIf={undefined} canEdit onSaved={() => {}} warnings={warnings} />
      </I18nProvider>,
    );
    const table = await screen.findByTestId("templates-table");
    const head = table.querySelector("thead")!.textContent!;
    for (const word of ["名称", "显存（MB）", "每芯片可容纳"]) expect(head).toContain(word);
    expect(head).not.toContain("Name");
    expect(screen.getByTestId("add-template").textContent).toBe("+ 添加模板");
    expect(screen.getByTestId("warnings").textContent).toBe("警告 Ascend310P: 10 slices per chip");
    expect(screen.getByText("模板在单个芯片上的容纳情况")).toBeTruthy();
    expect(within(screen.getByTestId("template-row-vir02")).getByText("删除")).toBeTruthy();
    const name = screen.getByTestId("template-row-vir01").querySelector("input[name=name]") as HTMLInputElement;
    expect(name.placeholder).toBe("例如 vir01");
    fireEvent.change(name, { target: { value: "vir03" } });
    expect(screen.getByTestId("name-hint").textContent).toBe("不是 Ascend310P 接受的模板名称（vir01, vir02, vir02_1c, vir04, vir04_3c, vir04_3c_ndvpp, vir04_4c_dvpp）");
    fireEvent.change(name, { target: { value: "vir01" } });
    const memory = screen.getByTestId("template-row-vir01").querySelector("input[name=memory]") as HTMLInputElement;
    fireEvent.change(memory, { target: { value: "2048" } });
    fireEvent.click(screen.getByTestId("save-template"));
    await waitFor(() => expect(screen.getByTestId("saved").textContent).toBe("已保存模板 vir01。 尚未生效：发布后才会写入 ConfigMap。"));
  });
});
