import { describe, expect, it } from "vitest";
import { orderingParam, orderingText, parseOrdering, toggleOrdering } from "./ordering";

const FIELDS = ["pod_name", "namespace", "memory", "started_at"] as const;

describe("ordering", () => {
  it("parses the query value, ignoring fields the server does not sort by", () => {
    expect(parseOrdering("memory", FIELDS)).toEqual({ field: "memory", dir: 1 });
    expect(parseOrdering("-started_at", FIELDS)).toEqual({ field: "started_at", dir: -1 });
    expect(parseOrdering("", FIELDS)).toBeNull();
    expect(parseOrdering("-pod_uid", FIELDS)).toBeNull();
    expect(parseOrdering("--memory", FIELDS)).toBeNull();
  });

  it("round-trips to text", () => {
    expect(orderingText({ field: "memory", dir: -1 })).toBe("-memory");
    expect(orderingText({ field: "pod_name", dir: 1 })).toBe("pod_name");
    expect(orderingText(null)).toBe("");
  });

  it("flips the same column and starts another in its first direction", () => {
    expect(toggleOrdering(null, "pod_name")).toEqual({ field: "pod_name", dir: 1 });
    expect(toggleOrdering({ field: "pod_name", dir: 1 }, "pod_name")).toEqual({ field: "pod_name", dir: -1 });
    expect(toggleOrdering({ field: "pod_name", dir: -1 }, "pod_name")).toEqual({ field: "pod_name", dir: 1 });
    expect(toggleOrdering({ field: "pod_name", dir: -1 }, "memory", -1)).toEqual({ field: "memory", dir: -1 });
  });

  it("adds tie-breakers so that pages stay stable", () => {
    const ties = ["namespace", "pod_name"] as const;
    expect(orderingParam({ field: "memory", dir: -1 }, ties)).toBe("-memory,namespace,pod_name");
    expect(orderingParam({ field: "namespace", dir: -1 }, ties)).toBe("-namespace,pod_name");
    expect(orderingParam(null, ties)).toBe("");
  });
});
