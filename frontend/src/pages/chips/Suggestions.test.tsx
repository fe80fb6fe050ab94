import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import type { ChipSuggestions } from "../../api/types";
import { ENGLISH } from "../../i18n/catalog";
import { I18nProvider } from "../../i18n/I18nProvider";
import { makeI18n, setCurrentI18n } from "../../i18n/intl";
import { renderAs, stubFetch } from "../testing";
import { SuggestionsPanel } from "./Suggestions";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setCurrentI18n(makeI18n("en", ENGLISH));
});

const answer: ChipSuggestions = {
  suggestions: [
    {
      action: "isolate",
      chip: { id: 7, uuid: "UUID-7", node: "npu-node-910b-01", index: 6, common_word: "Ascend910B4" },
      why: "the device plugin has registered the chip unhealthy for 12m 3s (more than 10m 0s)",
      since: "2026-01-01T00:00:00Z",
      slices: [{ namespace: "team", pod_name: "train-1", request: 12 }],
    },
  ],
  restore_available: false,
  restore_reason: "no PROMETHEUS_URL: the chips' hardware health is not read",
  rules: { suggest_after_seconds: 600, restore_after_seconds: 1800, auto_isolate: false, auto_restore: false },
};

describe("SuggestionsPanel", () => {
  it("lists a chip offered for isolation with its slices, and opens its dialog in one click", async () => {
    stubFetch((url) => (url === "/api/clusters/1/chip-suggestions/" ? { body: answer } : undefined));
    const onAct = vi.fn();
    renderAs("operator", <SuggestionsPanel clusterId={1} tick={0} onAct={onAct} />);
    await waitFor(() => expect(screen.getByTestId("suggestion-7").textContent).toContain("npu-node-910b-01 · Ascend910B4 #6"));
    expect(screen.getByTestId("suggestion-7").textContent).toContain("team/train-1 (request #12)");
    expect(screen.getByTestId("suggestion-7").textContent).toContain("unhealthy for 12m 3s");
    expect(screen.getByTestId("restore-unavailable").textContent).toContain("no PROMETHEUS_URL");
    fireEvent.click(screen.getByTestId("suggestion-act-7"));
    expect(onAct).toHaveBeenCalledWith(7, "isolate");
  });

  it("offers no act to viewers and says when there is nothing to suggest", async () => {
    stubFetch(() => ({ body: { ...answer, suggestions: [], restore_available: true, restore_reason: "" } }));
    renderAs("viewer", <SuggestionsPanel clusterId={1} tick={0} onAct={() => {}} />);
    await waitFor(() => expect(screen.getByTestId("chip-suggestions").textContent).toContain("No chip to isolate or restore."));
    expect(screen.queryByTestId("restore-unavailable")).toBeNull();
  });

  it("speaks Chinese, showing why as the API words it", async () => {
    stubFetch(() => ({ body: { ...answer, rules: { ...answer.rules, auto_restore: true } } }));
    renderAs(
      "operator",
      <I18nProvider locale="zh-CN">
        <SuggestionsPanel clusterId={1} tick={0} onAct={() => {}} />
      </I18nProvider>,
    );
    const line = await screen.findByTestId("suggestion-7");
    expect(screen.getByRole("heading", { level: 2 }).textContent).toBe("建议");
    expect(line.querySelector(".badge")!.textContent).toBe("隔离");
    expect(screen.getByTestId("suggestion-act-7").textContent).toBe("隔离…");
    expect(line.textContent).toContain("持有 1 个切片（排空前会一直运行）：");
    expect(line.textContent).toContain("team/train-1（申请 #12）");
    expect(line.textContent).toContain("unhealthy for 12m 3s");
    const panel = screen.getByTestId("chip-suggestions").textContent!;
    expect(panel).toContain("恢复健康已达 30分钟的芯片 · 策略自动执行（恢复）");
    expect(screen.getByTestId("restore-unavailable").textContent).toBe("无法提供恢复建议：no PROMETHEUS_URL: the chips' hardware health is not read");
    expect(panel).not.toMatch(/Holds|since|isolate a chip|request #/);
  });
});
