import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen } from "@testing-library/react";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { FitPicture } from "./FitPicture";

afterEach(() => {
  cleanup();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

const chip = { memory_allocatable: 21527, memory_capacity: 21527 + 1024, ai_core: 8, ai_cpu: 7 };
const templates = [
  { name: "vir01", memory: 3072, ai_core: 2, ai_cpu: 1 },
  { name: "vir04", memory: 12288, ai_core: 4, ai_cpu: 4 },
  { name: "huge", memory: 65536, ai_core: 8, ai_cpu: 7 },
];

describe("FitPicture", () => {
  it("says the slots, the reserve and what cannot fit, in English", () => {
    render(<FitPicture chip={chip} templates={templates} />);
    const text = screen.getByTestId("fit-picture").textContent ?? "";
    expect(screen.getByTestId("fit-slots").textContent).toBe("7");
    expect(text).toContain("slots per chip");
    expect(text).toContain("more than memoryAllocatable (21527 MB)");
    expect(text).toContain("1 GiB reserved");
    expect(text).toContain("over-commit");
    expect(screen.getByText("over-commit").getAttribute("title")).toBe("7 slices need 14 AICore of 8 and 7 AICPU of 7: HAMi does not count cores");
  });

  it("speaks Chinese, keeping the API's field names", async () => {
    render(
      <I18nProvider locale="zh-CN">
        <FitPicture chip={chip} templates={templates} />
      </I18nProvider>,
    );
    const text = (await screen.findByTestId("fit-picture")).textContent ?? "";
    expect(screen.getByTestId("fit-slots").textContent).toBe("7");
    expect(text).toContain("个槽位（每个芯片）");
    expect(text).toContain("超过 memoryAllocatable（21527 MB）");
    expect(text).toContain("预留 1 GiB");
    expect(text).toContain("超分");
    expect(screen.getByText("超分").getAttribute("title")).toBe("7 个切片需要 14 个 AI Core（共 8 个）和 7 个 AI CPU（共 7 个）：HAMi 不计算核数");
    expect(text).not.toContain("slots per chip");
    expect(text).not.toContain("over-commit");
    expect(text).not.toContain("reserved");
  });
});
