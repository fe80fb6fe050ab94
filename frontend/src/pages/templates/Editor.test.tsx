import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { ChipType, Template } from "../../api/types";
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

  it("hides every write action from a viewer", () => {
    render(<Editor chipType={chipType} templates={templates} whatIf={undefined} canEdit={false} onSaved={() => {}} warnings={[]} />);
    expect(screen.queryByTestId("add-template")).toBeNull();
    expect(screen.queryByText("Delete")).toBeNull();
    const memory = screen.getByTestId("template-row-vir01").querySelector("input[name=memory]") as HTMLInputElement;
    expect(memory.readOnly).toBe(true);
  });
});
