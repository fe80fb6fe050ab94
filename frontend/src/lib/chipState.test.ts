import { afterEach, describe, expect, it } from "vitest";
import { ENGLISH, loadMessages } from "../i18n/catalog";
import { makeI18n, setCurrentI18n } from "../i18n/intl";
import { CHIP_COLUMNS } from "../live/contract";
import { chipActs, STATE_LOOK, STATE_ORDER, stateLabel, stateTitle } from "./chipState";
import { ChipTable, filterChips, rowDecoder, slicesThatFit, sortChips, totalsByType } from "./chips";

const at = (column: string) => CHIP_COLUMNS.indexOf(column as (typeof CHIP_COLUMNS)[number]);

/** A live row in the contract's columns, with these values. */
function row(id: number, values: Record<string, unknown>): unknown[] {
  const base: Record<string, unknown> = {
    id, node: "n1", common_word: "Ascend910B4", index: id, uuid: `U-${id}`, healthy: true, cordoned: false,
    slots_used: 0, slots: 4, memory_used: 0, memory: 32768, aicore_used: 0, aicore: 20, aicpu_used: 0, aicpu: 7, state: "healthy",
  };
  const merged = { ...base, ...values };
  return CHIP_COLUMNS.map((c) => merged[c]);
}

describe("chip state", () => {
  it("is read from the live rows, and derived from health and cordon when a server does not send it", () => {
    expect(rowDecoder(CHIP_COLUMNS)(row(1, { state: "isolating" })).state).toBe("isolating");
    const withoutState = CHIP_COLUMNS.filter((c) => c !== "state");
    const old = rowDecoder(withoutState);
    const strip = (r: unknown[]) => r.filter((_, i) => i !== at("state"));
    expect(old(strip(row(2, { healthy: false }))).state).toBe("unhealthy");
    expect(old(strip(row(3, { cordoned: true }))).state).toBe("cordoned");
  });

  it("a delta that changes only the state is a change (the row is replaced, history kept)", () => {
    const table = new ChipTable();
    table.load(CHIP_COLUMNS, [row(1, {})]);
    expect(table.applyRows([row(1, {})])).toEqual([]);
    expect(table.applyRows([row(1, { state: "isolating" })])).toEqual([1]);
    expect(table.byId.get(1)?.state).toBe("isolating");
  });

  it("filters by state as the server's ?state= does", () => {
    const table = new ChipTable();
    table.load(CHIP_COLUMNS, [
      row(1, {}),
      row(2, { state: "draining", cordoned: true, slots_used: 1 }),
      row(3, { state: "isolated" }),
      row(4, { state: "unhealthy", healthy: false }),
      row(5, { state: "drained", cordoned: true, healthy: false }),
    ]);
    const ids = (state: Parameters<typeof filterChips>[1]["state"]) => filterChips(table.sorted(), { state }).map((c) => c.id);
    expect(ids("draining")).toEqual([2]);
    expect(ids("isolated")).toEqual([3]);
    expect(ids("unhealthy")).toEqual([4]); // the drained sick chip is "drained"
    expect(ids("healthy")).toEqual([1]);
    expect(ids("all")).toEqual([1, 2, 3, 4, 5]);
  });

  it("an isolated or isolating chip has no room and no free capacity, as the allocator sees it", () => {
    const table = new ChipTable();
    table.load(CHIP_COLUMNS, [row(1, {}), row(2, { state: "isolating" })]);
    const t = { name: "vir05_1c_8g", memory: 8192, ai_core: 5, ai_cpu: 1 };
    expect(slicesThatFit(table.byId.get(1)!, t)).toBe(4);
    expect(slicesThatFit(table.byId.get(2)!, t)).toBe(0);
    expect(totalsByType(table.sorted()).get("Ascend910B4")).toMatchObject({ chips: 2, memFree: 32768, slotsFree: 4 });
  });

  it("sorts by state in the order of the rules", () => {
    const table = new ChipTable();
    table.load(CHIP_COLUMNS, [row(1, {}), row(2, { state: "isolated" }), row(3, { state: "drained", cordoned: true })]);
    expect(sortChips(table.sorted(), { key: "health", dir: 1 }).map((c) => c.state)).toEqual(["isolated", "drained", "healthy"]);
  });

  it("offers the acts the state allows, to operators and admins only", () => {
    expect(chipActs("healthy", false, "operator")).toEqual(["isolate", "drain"]);
    expect(chipActs("healthy", false, "viewer")).toEqual([]);
    expect(chipActs("draining", true, "admin")).toEqual(["isolate", "uncordon"]);
    expect(chipActs("drained", true, "admin")).toEqual(["isolate", "uncordon"]);
    expect(chipActs("cordoned", true, "operator")).toEqual(["isolate", "drain", "uncordon"]);
    expect(chipActs("isolating", false, "operator")).toEqual(["restore", "drain"]);
    expect(chipActs("isolated", false, "operator")).toEqual(["restore", "drain"]);
    expect(chipActs("restoring", false, "operator")).toEqual([]);
  });

  it("has a look for every state", () => {
    expect(Object.keys(STATE_LOOK).sort()).toEqual([...STATE_ORDER].sort());
  });

  it("words every state in English and in Chinese, following the current language", async () => {
    const zh = makeI18n("zh-CN", await loadMessages("zh-CN"));
    for (const state of STATE_ORDER) {
      expect(stateLabel(state)).toBe(state);
      expect(stateTitle(state)).not.toBe(`chipState.title.${state}`);
      expect(stateLabel(state, zh.t)).toMatch(/^[\u4e00-\u9fff]+$/);
      expect(stateTitle(state, zh.t)).not.toMatch(/[a-z]{4,}/);
    }
    expect(STATE_LOOK.isolated.label).toBe("isolated");
    setCurrentI18n(zh);
    // the heat map reads STATE_LOOK: it follows the language the provider set
    expect(STATE_LOOK.isolated.label).toBe("已隔离");
    expect(STATE_LOOK.cordoned.title).toContain("恢复调度");
    expect(STATE_LOOK.cordoned.badge).toBe("warn");
  });
});

afterEach(() => setCurrentI18n(makeI18n("en", ENGLISH)));
