import { describe, expect, it } from "vitest";
import { byValue, quotaBody, quotaErrors, quotaRows, splitList, volcanoView } from "./quotas";

describe("quotaRows", () => {
  it("merges quotas and usage by chip type; usage without a quota is unlimited", () => {
    const rows = quotaRows({
      quotas: [{ chip_type: "B", memory_limit: 100, slots_limit: null }],
      usage: [
        { chip_type: "A", memory_used: 5, slots_used: 1, pending: 2, running: 1 },
        { chip_type: "B", memory_used: 50, slots_used: 2, pending: 0, running: 2 },
      ],
    });
    expect(rows).toEqual([
      { chipType: "A", memoryLimit: null, slotsLimit: null, memoryUsed: 5, slotsUsed: 1, pending: 2, running: 1 },
      { chipType: "B", memoryLimit: 100, slotsLimit: null, memoryUsed: 50, slotsUsed: 2, pending: 0, running: 2 },
    ]);
  });
});

describe("volcanoView", () => {
  it("reads Open as ok, Missing as a warning, other states as failures with their reason", () => {
    expect(volcanoView({ state: "Open", managed: true, capability: {}, reason: "" }).kind).toBe("ok");
    expect(volcanoView({ state: "Missing", managed: false, capability: {}, reason: "r" })).toEqual({ kind: "warn", label: "Missing", detail: "r" });
    expect(volcanoView({ state: "Closing", managed: false, capability: {}, reason: "fix" })).toEqual({ kind: "fail", label: "Closing", detail: "fix" });
    expect(volcanoView({ state: "", managed: false, capability: {}, reason: "not watched" }).label).toBe("not known");
    expect(volcanoView(null).label).toBe("not known");
  });
});

describe("quota editor", () => {
  it("sends empty limits as null and non-numbers as typed", () => {
    expect(quotaBody([{ chip_type: "A", memory_limit: " 4096 ", slots_limit: "" }, { chip_type: "B", memory_limit: "1.5", slots_limit: "2" }])).toEqual({
      quotas: [
        { chip_type: "A", memory_limit: 4096, slots_limit: null },
        { chip_type: "B", memory_limit: "1.5", slots_limit: 2 },
      ],
    });
  });
  it("maps quotas[i].field onto its row and everything else above the rows", () => {
    expect(quotaErrors({ errors: { "quotas[2].chip_type": ["no chip type"], quotas: ["chip type 'A' appears twice"], cluster: ["gone"] } })).toEqual({
      rows: { "2.chip_type": ["no chip type"] },
      form: ["chip type 'A' appears twice", "cluster: gone"],
    });
    expect(quotaErrors({ errors: { "quotas.1.slots_limit": ["Ensure this value is greater than or equal to 0."] } }).rows).toEqual({
      "1.slots_limit": ["Ensure this value is greater than or equal to 0."],
    });
    expect(quotaErrors({ message: "Forbidden." })).toEqual({ rows: {}, form: ["Forbidden."] });
  });
  it("splits a namespace list on commas and spaces", () => {
    expect(splitList(" ci, batch  ml ,")).toEqual(["ci", "batch", "ml"]);
  });
});

describe("byValue", () => {
  it("puts the highest value first, ties by name", () => {
    expect(byValue([{ name: "b", value: 1 }, { name: "c", value: 9 }, { name: "a", value: 1 }]).map((c) => c.name)).toEqual(["c", "a", "b"]);
  });
});
