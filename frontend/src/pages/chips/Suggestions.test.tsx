import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import type { ChipSuggestions } from "../../api/types";
import { renderAs, stubFetch } from "../testing";
import { SuggestionsPanel } from "./Suggestions";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
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
});
