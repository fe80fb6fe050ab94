import { describe, expect, it } from "vitest";
import { CHIP_COLUMNS } from "../live/contract";
import {
  ChipTable,
  filterChips,
  fittingTemplates,
  groupByNode,
  slicesThatFit,
  templatesByType,
  rowDecoder,
  sortChips,
  totalsByType,
  type Chip,
} from "./chips";

// Rows as /api/clusters/<id>/chip-usage/ sends them (the guide's cluster).
const row = (id: number, node: string, type: string, index: number, o: Partial<Record<string, unknown>> = {}) => [
  id,
  node,
  type,
  index,
  `UUID-${id}`,
  o.healthy ?? true,
  o.cordoned ?? false,
  o.slotsUsed ?? 0,
  o.slots ?? 7,
  o.memUsed ?? 0,
  o.mem ?? 21527,
  o.coreUsed ?? 0,
  o.core ?? 8,
  o.cpuUsed ?? 0,
  o.cpu ?? 7,
  o.state ?? (o.healthy === false ? "unhealthy" : o.cordoned ? "cordoned" : "healthy"),
];

const guideRows = () => [
  row(1, "npu-node-310p-01", "Ascend310P", 0, { slotsUsed: 1, memUsed: 3072, coreUsed: 1, cpuUsed: 1 }),
  row(2, "npu-node-310p-01", "Ascend310P", 1),
  row(5, "npu-node-910b-01", "Ascend910B4", 0, { slots: 4, mem: 32768, core: 20 }),
  row(10, "npu-node-910b-01", "Ascend910B4", 5, { slots: 4, mem: 32768, core: 20, healthy: false }),
  row(11, "npu-node-910b-01", "Ascend910B4", 6, { slots: 4, mem: 32768, core: 20, slotsUsed: 4, memUsed: 32768 }),
];

describe("rowDecoder", () => {
  it("reads columns by name, whatever their order", () => {
    const columns = ["memory", "id", "node", "common_word", "memory_used"];
    const chip = rowDecoder(columns)([21527, 3, "n1", "Ascend310P", 1024]);
    expect(chip).toMatchObject({ id: 3, node: "n1", type: "Ascend310P", mem: 21527, memUsed: 1024 });
  });

  it("ignores columns it does not know", () => {
    const chip = rowDecoder([...CHIP_COLUMNS, "future_column"])([...row(1, "n", "T", 0), "x"]);
    expect(chip.id).toBe(1);
    expect((chip as unknown as Record<string, unknown>).future_column).toBeUndefined();
  });
});

describe("ChipTable", () => {
  it("loads a snapshot and keeps the natural order", () => {
    const table = new ChipTable();
    table.load(CHIP_COLUMNS, [...guideRows()].reverse());
    expect(table.size).toBe(5);
    expect(table.sorted().map((c) => c.id)).toEqual([1, 2, 5, 10, 11]);
  });

  it("applies chips deltas by id: changed rows replace, unchanged are ignored", () => {
    const table = new ChipTable();
    table.load(CHIP_COLUMNS, guideRows());
    const before = table.version;
    const sameRow = guideRows()[1];
    expect(table.applyRows([sameRow], 1000)).toEqual([]);
    expect(table.version).toBe(before);

    const changed = table.applyRows([row(2, "npu-node-310p-01", "Ascend310P", 1, { slotsUsed: 1, memUsed: 6144 })], 2000);
    expect(changed).toEqual([2]);
    expect(table.version).toBe(before + 1);
    expect(table.byId.get(2)).toMatchObject({ slotsUsed: 1, memUsed: 6144 });
    expect(table.changedAt.get(2)).toBe(2000);
    // the history starts with the snapshot state
    expect(table.history.get(2)).toEqual([
      { t: 0, slotsUsed: 0, memUsed: 0, healthy: true },
      { t: 2000, slotsUsed: 1, memUsed: 6144, healthy: true },
    ]);
    // the sorted cache follows the version
    expect(table.sorted().find((c) => c.id === 2)?.memUsed).toBe(6144);
  });

  it("inserts a chip it did not know (a new node's chips)", () => {
    const table = new ChipTable();
    table.load(CHIP_COLUMNS, guideRows());
    table.applyRows([row(99, "npu-node-new", "Ascend310P", 0)]);
    expect(table.size).toBe(6);
    expect(table.sorted().at(-1)?.id).toBe(99);
  });

  it("a new snapshot replaces everything (resync after a reconnect)", () => {
    const table = new ChipTable();
    table.load(CHIP_COLUMNS, guideRows());
    table.applyRows([row(2, "npu-node-310p-01", "Ascend310P", 1, { slotsUsed: 3 })]);
    table.load(undefined, [row(1, "x", "Ascend310P", 0)]);
    expect(table.size).toBe(1);
    expect(table.history.size).toBe(0);
  });

  it("drops the chips of a removed node", () => {
    const table = new ChipTable();
    table.load(CHIP_COLUMNS, guideRows());
    expect(table.removeNode("npu-node-910b-01")).toBe(3);
    expect([...table.byId.keys()]).toEqual([1, 2]);
  });
});

describe("filters and aggregation", () => {
  const table = new ChipTable();
  table.load(CHIP_COLUMNS, guideRows());
  const chips = table.sorted();

  it("filters by node substring (several terms match any), type and state", () => {
    expect(filterChips(chips, { node: "910B" }).map((c) => c.id)).toEqual([5, 10, 11]);
    expect(filterChips(chips, { node: "310p, 910b-01" })).toHaveLength(5);
    expect(filterChips(chips, { type: "Ascend310P" }).map((c) => c.id)).toEqual([1, 2]);
    expect(filterChips(chips, { state: "unhealthy" }).map((c) => c.id)).toEqual([10]);
    expect(filterChips(chips, { state: "full" }).map((c) => c.id)).toEqual([11]);
    expect(filterChips(chips, { state: "free" }).map((c) => c.id)).toEqual([1, 2, 5]);
    expect(filterChips(chips, { state: "busy" }).map((c) => c.id)).toEqual([1, 11]);
    expect(filterChips(chips, { state: "idle", type: "Ascend910B4" }).map((c) => c.id)).toEqual([5, 10]);
    expect(filterChips(chips, {})).toBe(chips);
  });

  it("room is room for a template in all four dimensions", () => {
    const templates = templatesByType([
      { common_word: "Ascend910B4", name: "vir10_3c_16g", memory: 16384, ai_core: 10, ai_cpu: 3 },
      { common_word: "Ascend910B4", name: "vir05_1c_8g", memory: 8192, ai_core: 5, ai_cpu: 1 },
    ]);
    const base: Chip = { ...chips.find((c) => c.id === 5)!, slots: 4, slotsUsed: 0, mem: 32768, memUsed: 0, core: 20, coreUsed: 0, cpu: 7, cpuUsed: 0 };
    expect(templates.get("Ascend910B4")!.map((t) => t.name)).toEqual(["vir05_1c_8g", "vir10_3c_16g"]);
    expect(slicesThatFit(base, templates.get("Ascend910B4")![1])).toBe(2);
    // 23 MB free and no AICPU left: a free slot is not room.
    const starved = { ...base, memUsed: 32768 - 23, cpuUsed: 7, slotsUsed: 3 };
    expect(fittingTemplates(starved, templates)).toEqual([]);
    expect(filterChips([base, starved], { state: "free", templates })).toEqual([base]);
    expect(filterChips([base, starved], { state: "full", templates })).toEqual([starved]);
    const twelveFree = { ...base, id: 99, memUsed: 32768 - 12288 };
    expect(filterChips([base, twelveFree], { roomFor: "vir10_3c_16g", templates }).map((c) => c.id)).toEqual([base.id]);
    expect(filterChips([base, twelveFree], { roomFor: "vir05_1c_8g", templates })).toHaveLength(2);
    expect(filterChips([{ ...base, cordoned: true }], { roomFor: "vir05_1c_8g", templates })).toEqual([]);
  });

  it("totals per chip type count slices as slots in use", () => {
    const totals = totalsByType(chips);
    expect([...totals.keys()]).toEqual(["Ascend310P", "Ascend910B4"]);
    expect(totals.get("Ascend310P")).toMatchObject({ chips: 2, slices: 1, memUsed: 3072, mem: 43054, slots: 14, coreUsed: 1 });
    expect(totals.get("Ascend910B4")).toMatchObject({ chips: 3, unhealthy: 1, full: 1, slotsUsed: 4, slots: 12 });
  });

  it("counts free capacity only where a slice can go (healthy, not cordoned)", () => {
    const totals = totalsByType(chips);
    // 910B4: chip 5 idle (free), chip 10 unhealthy (not counted), chip 11 full
    expect(totals.get("Ascend910B4")).toMatchObject({ memFree: 32768, slotsFree: 4 });
    expect(totals.get("Ascend310P")).toMatchObject({ memFree: 43054 - 3072, slotsFree: 13 });
    const cordoned = new ChipTable();
    cordoned.load(CHIP_COLUMNS, [row(1, "n", "Ascend310P", 0, { cordoned: true }), row(2, "n", "Ascend310P", 1)]);
    expect(totalsByType(cordoned.sorted()).get("Ascend310P")).toMatchObject({ memFree: 21527, slotsFree: 7, mem: 43054 });
  });

  it("groups by node with per-node totals", () => {
    const groups = groupByNode(chips);
    expect(groups.map((g) => [g.node, g.chips.length, g.totals.unhealthy])).toEqual([
      ["npu-node-310p-01", 2, 0],
      ["npu-node-910b-01", 3, 1],
    ]);
  });

  it("sorts by usage, fullest first, ties in natural order", () => {
    const bySlots = sortChips(chips, { key: "slots", dir: -1 }).map((c: Chip) => c.id);
    expect(bySlots).toEqual([11, 1, 2, 5, 10]);
    expect(sortChips(chips, { key: "health", dir: 1 })[0].id).toBe(10);
  });
});
