import { describe, expect, it } from "vitest";
import { chipFit, slotsPerChip } from "./fit";

// The guide's device config.
const ascend310p = { memory_allocatable: 21527, memory_capacity: 24576, ai_core: 8, ai_cpu: 7 };
const templates310p = [
  { name: "vir01", memory: 3072, ai_core: 1, ai_cpu: 1 },
  { name: "vir02", memory: 6144, ai_core: 2, ai_cpu: 2 },
  { name: "vir04", memory: 12288, ai_core: 4, ai_cpu: 4 },
];
const ascend910b4 = { memory_allocatable: 32768, memory_capacity: 32768, ai_core: 20, ai_cpu: 7 };
const templates910b = [
  { name: "vir05_1c_8g", memory: 8192, ai_core: 5, ai_cpu: 1 },
  { name: "vir10_3c_16g", memory: 16384, ai_core: 10, ai_cpu: 3 },
];

describe("fit picture maths", () => {
  it("slots = memoryAllocatable // smallest template memory", () => {
    expect(slotsPerChip(21527, templates310p)).toBe(7);
    expect(slotsPerChip(32768, templates910b)).toBe(4);
    expect(slotsPerChip(21527, [])).toBe(0);
    expect(slotsPerChip(0, templates310p)).toBe(0);
  });

  it("counts how many of each template fit alone on one chip (the guide's 310P3)", () => {
    const fit = chipFit(ascend310p, templates310p);
    expect(fit.slots).toBe(7);
    expect(fit.reserved).toBe(24576 - 21527);
    expect(fit.templates.map((t) => [t.name, t.fit, t.leftover])).toEqual([
      ["vir01", 7, 21527 - 7 * 3072],
      ["vir02", 3, 21527 - 3 * 6144],
      ["vir04", 1, 21527 - 12288],
    ]);
    expect(fit.templates.map((t) => t.smallest)).toEqual([true, false, false]);
    expect(fit.templates.some((t) => t.overcommitCore || t.overcommitCpu)).toBe(false);
  });

  it("the smallest template sets the slots; bigger ones fit fewer", () => {
    const fit = chipFit({ memory_allocatable: 20000 }, [
      { name: "big", memory: 5000 },
      { name: "small", memory: 2000 },
    ]);
    expect(fit.slots).toBe(10);
    expect(fit.smallestMemory).toBe(2000);
    expect(fit.templates.map((t) => [t.name, t.fit, t.smallest])).toEqual([
      ["big", 4, false],
      ["small", 10, true],
    ]);
  });

  it("flags AICore / AICPU over-commit, which HAMi does not count", () => {
    const fit = chipFit(ascend910b4, [{ name: "vir05_1c_8g", memory: 8192, ai_core: 6, ai_cpu: 2 }]);
    expect(fit.templates[0].fit).toBe(4);
    expect(fit.templates[0].coresUsed).toBe(24);
    expect(fit.templates[0].overcommitCore).toBe(true);
    expect(fit.templates[0].overcommitCpu).toBe(true);
    expect(chipFit(ascend910b4, templates910b).templates.map((t) => t.overcommitCore)).toEqual([false, false]);
  });

  it("marks invalid templates instead of dividing by zero", () => {
    const fit = chipFit(ascend310p, [
      { name: "zero", memory: 0 },
      { name: "huge", memory: 99999 },
      { name: "vir01", memory: 3072 },
    ]);
    expect(fit.templates[0]).toMatchObject({ fit: 0, invalid: "memory must be greater than 0" });
    expect(fit.templates[1].invalid).toMatch(/more than memoryAllocatable/);
    expect(fit.slots).toBe(7);
  });
});
