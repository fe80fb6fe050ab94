import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { ENGLISH } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import type { Locale } from "../i18n/locale";
import { groupByNode, type Chip } from "../lib/chips";
import { LineChart, StackBars } from "./Charts";
import { Heatmap } from "./Heatmap";

afterEach(() => {
  cleanup();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

function charts(locale: Locale) {
  return render(
    <I18nProvider locale={locale}>
      <div data-testid="line">
        <LineChart series={[]} />
      </div>
      <div data-testid="bars">
        <StackBars rows={[]} format={String} />
      </div>
      <Heatmap groups={[]} metric="memory" mode="chip" selectedId={null} version={0} onSelectChip={() => {}} onSelectNode={() => {}} />
    </I18nProvider>,
  );
}

describe("charts and the heat map with nothing to draw", () => {
  it("say so in English", async () => {
    charts("en");
    expect((await screen.findByTestId("line")).textContent).toBe("No samples yet.");
    expect(screen.getByTestId("bars").textContent).toBe("Nothing to show.");
    expect(screen.getByTestId("heatmap").textContent).toBe("No chips match the filters.");
  });

  it("say so in Chinese", async () => {
    charts("zh-CN");
    expect((await screen.findByTestId("line")).textContent).toBe("暂无样本。");
    expect(screen.getByTestId("bars").textContent).toBe("暂无数据。");
    expect(screen.getByTestId("heatmap").textContent).toBe("没有符合筛选条件的芯片。");
  });
});

const chip = (id: number, healthy: boolean): Chip => ({
  id, node: "node-a", type: "Ascend310P", index: id - 1, uuid: `u${id}`, healthy, cordoned: false, state: healthy ? "healthy" : "unhealthy",
  slotsUsed: 1, slots: 7, memUsed: 3072, mem: 21527, coreUsed: 1, core: 8, cpuUsed: 0, cpu: 7,
});

describe("the heat map's words", () => {
  it("names its metric and a node's figures in Chinese", async () => {
    render(
      <I18nProvider locale="zh-CN">
        <Heatmap groups={groupByNode([chip(1, true), chip(2, false)])} metric="aicore" mode="node" selectedId={null} version={0} onSelectChip={() => {}} onSelectNode={() => {}} />
      </I18nProvider>,
    );
    const canvas = await screen.findByRole("img");
    expect(canvas.getAttribute("aria-label")).toBe("AI Core使用率热力图");
    // the node's cell: below its name's band, at the top left
    fireEvent.mouseMove(canvas, { clientX: 4, clientY: 20 });
    const tip = document.querySelector(".tooltip");
    expect(tip).toBeTruthy();
    const rows = [...tip!.querySelectorAll(".t-row")].map((r) => r.textContent);
    expect(rows).toEqual(["芯片2（1 个不健康）", "显存6 GiB / 42.0 GiB", "槽位2 / 14", "AI Core2 / 16", "AI Core13%"]);
  });
});
