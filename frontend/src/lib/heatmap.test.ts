import { describe, expect, it } from "vitest";
import { groupByNode, type Chip } from "./chips";
import { cellOrigin, cellSizeFor, heatFill, hitTest, hslToHex, IDLE_FILL, layoutHeatmap } from "./heatmap";
import { heatColor } from "./format";

function chips(nodes: number, perNode: number): Chip[] {
  const out: Chip[] = [];
  let id = 1;
  for (let n = 0; n < nodes; n++)
    for (let i = 0; i < perNode; i++)
      out.push({
        id: id++, node: `node-${String(n).padStart(4, "0")}`, type: "Ascend310P", index: i, uuid: `u${id}`, healthy: true, cordoned: false, state: "healthy",
        slotsUsed: 0, slots: 7, memUsed: 0, mem: 21527, coreUsed: 0, core: 8, cpuUsed: 0, cpu: 7,
      });
  return out;
}

describe("heat map layout", () => {
  it("shrinks cells as chips grow", () => {
    expect(cellSizeFor(12)).toBeGreaterThan(cellSizeFor(8000));
    expect(cellSizeFor(8000)).toBeGreaterThanOrEqual(7);
  });

  it("lays 8,000 chips out in a bounded height and hit-tests every cell back", () => {
    const groups = groupByNode(chips(1000, 8));
    const layout = layoutHeatmap(groups, 1100, "chip");
    expect(layout.perRow).toBeGreaterThan(10);
    expect(layout.height).toBeLessThan(1200);
    for (const [i, j] of [[0, 0], [17, 5], [999, 7]]) {
      const [x, y] = cellOrigin(layout, i, j);
      expect(hitTest(layout, groups, x + 1, y + 1)).toEqual({ group: i, chip: j });
    }
    expect(hitTest(layout, groups, -1, 5)).toBeNull();
    expect(hitTest(layout, groups, 5, layout.height + 100)).toBeNull();
  });

  it("in node mode a few nodes are named above their cells", () => {
    const groups = groupByNode(chips(12, 8));
    const layout = layoutHeatmap(groups, 1100, "node");
    expect(layout.label).toBeGreaterThan(0);
    expect(layout.blockW).toBeGreaterThanOrEqual(120);
    const [x, y] = cellOrigin(layout, 5, 0);
    expect(hitTest(layout, groups, x + 1, y + 1)).toEqual({ group: 5, chip: -1 });
    // the name's band beside the cell is not the node's cell
    expect(hitTest(layout, groups, x + layout.cell + 20, y + 1)).toBeNull();
  });

  it("in node mode one cell stands for a node", () => {
    const groups = groupByNode(chips(1000, 8));
    const layout = layoutHeatmap(groups, 1100, "node");
    expect(layout.height).toBeLessThan(300);
    const [x, y] = cellOrigin(layout, 42, 0);
    expect(hitTest(layout, groups, x + 1, y + 1)).toEqual({ group: 42, chip: -1 });
  });
});

describe("heat map colours", () => {
  it("converts hsl to hex as CSS does", () => {
    expect(hslToHex(0, 100, 50)).toBe("#ff0000");
    expect(hslToHex(120, 100, 25)).toBe("#008000");
    expect(hslToHex(140, 62, 58)).toBe(hslToHexOf(heatColor(0.001)));
  });

  it("follows heatColor's ramp", () => {
    expect(heatFill(0)).toBe(IDLE_FILL);
    expect(heatFill(-1)).toBe(IDLE_FILL);
    expect(heatFill(Number.NaN)).toBe(IDLE_FILL);
    for (const f of [0.25, 0.5, 0.6, 0.75, 1]) expect(heatFill(f)).toBe(hslToHexOf(heatColor(f)));
    expect(heatFill(2)).toBe(heatFill(1));
  });
});

/** heatColor's "hsl(h s% l%)" as hex. */
function hslToHexOf(css: string): string {
  const [h, s, l] = css.match(/[\d.]+/g)!.map(Number);
  return hslToHex(h, s, l);
}
