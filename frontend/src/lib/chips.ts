// Chips as the UI holds them: rows of /api/clusters/<id>/chip-usage/ (and of the
// WebSocket's snapshot and `chips` deltas) turned into objects keyed by id, plus
// the filters and aggregations the chips page and the overview need. Pure: no
// React, no DOM; everything here runs in O(chips) and is unit-tested.

import { CHIP_COLUMNS, type ChipColumn } from "../live/contract";
import { inIsolation, legacyState, STATE_ORDER, type ChipStateName } from "./chipState";

export interface Chip {
  id: number;
  node: string;
  type: string;
  index: number;
  uuid: string;
  healthy: boolean;
  cordoned: boolean;
  slotsUsed: number;
  slots: number;
  memUsed: number;
  mem: number;
  coreUsed: number;
  core: number;
  cpuUsed: number;
  cpu: number;
  /** what the chip is doing, in one word (the server's derived state) */
  state: ChipStateName;
}

/** A chip's state at a moment (t = 0: as in the snapshot). */
export interface ChipPoint {
  t: number;
  slotsUsed: number;
  memUsed: number;
  healthy: boolean;
}

/**
 * Chip column (the live contract's CHIP_COLUMNS) -> Chip property. Columns are
 * read by name from the snapshot, so their order may change; a column the
 * contract adds fails type-checking here until it is mapped.
 */
const COLUMN_KEYS: Record<ChipColumn, keyof Chip> = {
  id: "id",
  node: "node",
  common_word: "type",
  index: "index",
  uuid: "uuid",
  healthy: "healthy",
  cordoned: "cordoned",
  slots_used: "slotsUsed",
  slots: "slots",
  memory_used: "memUsed",
  memory: "mem",
  aicore_used: "coreUsed",
  aicore: "core",
  aicpu_used: "cpuUsed",
  aicpu: "cpu",
  state: "state",
};

export type RowDecoder = (row: readonly unknown[]) => Chip;

export function rowDecoder(columns: readonly string[]): RowDecoder {
  // Where each property's column is (-1: not sent; a column this build does
  // not know is skipped). The chip is built as one object literal: a snapshot
  // decodes 8,000 rows while the page waits, and setting properties by
  // computed key on a prototype object cost several times more.
  const known: Partial<Record<string, keyof Chip>> = COLUMN_KEYS;
  const at = (key: keyof Chip) => columns.findIndex((c) => Object.hasOwn(known, c) && known[c] === key);
  const id = at("id");
  const node = at("node");
  const type = at("type");
  const index = at("index");
  const uuid = at("uuid");
  const healthy = at("healthy");
  const cordoned = at("cordoned");
  const slotsUsed = at("slotsUsed");
  const slots = at("slots");
  const memUsed = at("memUsed");
  const mem = at("mem");
  const coreUsed = at("coreUsed");
  const core = at("core");
  const cpuUsed = at("cpuUsed");
  const cpu = at("cpu");
  const state = at("state");
  // A missing column, or a null in it, keeps the default.
  const num = (row: readonly unknown[], i: number) => (i < 0 ? 0 : ((row[i] ?? 0) as number));
  const str = (row: readonly unknown[], i: number) => (i < 0 ? "" : ((row[i] ?? "") as string));
  const bool = (row: readonly unknown[], i: number, fallback: boolean) => (i < 0 ? fallback : ((row[i] ?? fallback) as boolean));
  return (row) => {
    const isHealthy = bool(row, healthy, true);
    const isCordoned = bool(row, cordoned, false);
    return {
      id: num(row, id),
      node: str(row, node),
      type: str(row, type),
      index: num(row, index),
      uuid: str(row, uuid),
      healthy: isHealthy,
      cordoned: isCordoned,
      slotsUsed: num(row, slotsUsed),
      slots: num(row, slots),
      memUsed: num(row, memUsed),
      mem: num(row, mem),
      coreUsed: num(row, coreUsed),
      core: num(row, core),
      cpuUsed: num(row, cpuUsed),
      cpu: num(row, cpu),
      // a server without the column: health and cordon say what they can
      state: state < 0 || row[state] == null ? legacyState(isHealthy, isCordoned) : (row[state] as ChipStateName),
    };
  };
}

/** Compare for the natural order: node, chip type, index. */
export function naturalOrder(a: Chip, b: Chip): number {
  if (a.node !== b.node) return a.node < b.node ? -1 : 1;
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  return a.index - b.index;
}

function sameChip(a: Chip, b: Chip): boolean {
  return (
    a.node === b.node &&
    a.type === b.type &&
    a.index === b.index &&
    a.uuid === b.uuid &&
    a.healthy === b.healthy &&
    a.cordoned === b.cordoned &&
    a.slotsUsed === b.slotsUsed &&
    a.slots === b.slots &&
    a.memUsed === b.memUsed &&
    a.mem === b.mem &&
    a.coreUsed === b.coreUsed &&
    a.core === b.core &&
    a.cpuUsed === b.cpuUsed &&
    a.cpu === b.cpu &&
    a.state === b.state
  );
}

/**
 * Every chip of one cluster, by id. `version` grows with every change so views
 * can memoise on it; `sorted()` is cached per version.
 */
export class ChipTable {
  readonly byId = new Map<number, Chip>();
  version = 0;
  /** ids changed by deltas, with the time they last changed (for a flash) */
  readonly changedAt = new Map<number, number>();
  /** per chip, its states since the snapshot (only chips that changed; at most 30 each) */
  readonly history = new Map<number, ChipPoint[]>();
  private columns: readonly string[] = CHIP_COLUMNS;
  private decode: RowDecoder = rowDecoder(CHIP_COLUMNS);
  private sortedCache: { version: number; list: Chip[] } | null = null;

  /** Replace everything with a snapshot (on connect and on every reconnect). */
  load(columns: readonly string[] | undefined, rows: readonly (readonly unknown[])[]): void {
    if (columns && columns.length) {
      this.columns = [...columns];
      this.decode = rowDecoder(this.columns);
    }
    this.byId.clear();
    this.changedAt.clear();
    this.history.clear();
    for (const row of rows) {
      const chip = this.decode(row);
      this.byId.set(chip.id, chip);
    }
    this.version++;
  }

  /** Apply a `chips` delta: rows (in the snapshot's columns) upserted by id. Returns the changed ids. */
  applyRows(rows: readonly (readonly unknown[])[], now: number = Date.now()): number[] {
    const changed: number[] = [];
    for (const row of rows) {
      const chip = this.decode(row);
      const old = this.byId.get(chip.id);
      if (old && sameChip(old, chip)) continue;
      this.byId.set(chip.id, chip);
      this.changedAt.set(chip.id, now);
      changed.push(chip.id);
      let points = this.history.get(chip.id);
      if (!points) {
        points = old ? [{ t: 0, slotsUsed: old.slotsUsed, memUsed: old.memUsed, healthy: old.healthy }] : [];
        this.history.set(chip.id, points);
      }
      points.push({ t: now, slotsUsed: chip.slotsUsed, memUsed: chip.memUsed, healthy: chip.healthy });
      if (points.length > 30) points.splice(0, points.length - 30);
    }
    if (changed.length) this.version++;
    return changed;
  }

  /** Drop the chips of a node that left the cluster. */
  removeNode(name: string): number {
    let removed = 0;
    for (const [id, chip] of this.byId) {
      if (chip.node === name) {
        this.byId.delete(id);
        removed++;
      }
    }
    if (removed) this.version++;
    return removed;
  }

  get size(): number {
    return this.byId.size;
  }

  sorted(): Chip[] {
    if (this.sortedCache?.version !== this.version) {
      this.sortedCache = { version: this.version, list: [...this.byId.values()].sort(naturalOrder) };
    }
    return this.sortedCache.list;
  }
}

// --- filters -------------------------------------------------------------------------

/** The chips table's state filter: the chip's state, or a usage condition. */
export type ChipState = "all" | ChipStateName | "free" | "full" | "idle" | "busy";

export interface ChipFilter {
  /** node name: substring, case-insensitive; several separated by spaces or commas match any */
  node?: string;
  /** chip type (commonWord); empty = all */
  type?: string;
  state?: ChipState;
  /** templates per chip type: "Has room" means room for the smallest of them */
  templates?: TemplatesByType;
  /** a template name: only chips with room for one more slice of it */
  roomFor?: string;
}

// --- room: room for a template, in the four dimensions the allocator checks -----------

export interface TemplateShape {
  name: string;
  memory: number;
  ai_core: number | null;
  ai_cpu: number | null;
}

/** Templates by chip type (commonWord), smallest first. */
export type TemplatesByType = Map<string, TemplateShape[]>;

export function templatesByType(templates: Iterable<TemplateShape & { common_word: string }>): TemplatesByType {
  const out: TemplatesByType = new Map();
  for (const t of templates) {
    const list = out.get(t.common_word) ?? [];
    list.push({ name: t.name, memory: t.memory, ai_core: t.ai_core, ai_cpu: t.ai_cpu });
    out.set(t.common_word, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.memory - b.memory || a.name.localeCompare(b.name));
  return out;
}

/** The allocator may place here: healthy, uncordoned and not (being) isolated (apps/inventory/selectors.py's "eligible"). */
export function inService(chip: Pick<Chip, "healthy" | "cordoned" | "state">): boolean {
  return chip.healthy && !chip.cordoned && !inIsolation(chip.state);
}

/** How many more slices of the template fit at once (the API's rule, apps/inventory/room.py). */
export function slicesThatFit(chip: Chip, t: TemplateShape): number {
  if (!inService(chip) || t.memory <= 0) return 0;
  const limits = [chip.slots - chip.slotsUsed, Math.floor((chip.mem - chip.memUsed) / t.memory)];
  if (chip.core && t.ai_core) limits.push(Math.floor((chip.core - chip.coreUsed) / t.ai_core));
  if (chip.cpu && t.ai_cpu) limits.push(Math.floor((chip.cpu - chip.cpuUsed) / t.ai_cpu));
  return Math.max(0, Math.min(...limits));
}

/** The templates of the chip's type of which one more slice fits, smallest first. */
export function fittingTemplates(chip: Chip, templates: TemplatesByType | undefined): TemplateShape[] {
  return (templates?.get(chip.type) ?? []).filter((t) => slicesThatFit(chip, t) > 0);
}

/** No template of its type fits, whatever the chip's health (slot, memory, AICore or AICPU used up). */
export function isFull(chip: Chip, templates: TemplatesByType | undefined): boolean {
  return !hasRoom({ ...chip, healthy: true, cordoned: false, state: "healthy" }, templates);
}

function hasRoom(chip: Chip, templates: TemplatesByType | undefined): boolean {
  const own = templates?.get(chip.type);
  // Without the templates (not loaded yet): a free slot and free memory.
  if (!own?.length) return inService(chip) && chip.slotsUsed < chip.slots && chip.memUsed < chip.mem;
  return slicesThatFit(chip, own[0]) > 0;
}

export function matchesState(chip: Chip, state: ChipState | undefined, templates?: TemplatesByType): boolean {
  switch (state ?? "all") {
    case "all":
      return true;
    case "free":
      return hasRoom(chip, templates);
    case "full":
      return isFull(chip, templates);
    case "idle":
      return chip.slotsUsed === 0;
    case "busy":
      return chip.slotsUsed > 0;
    default:
      // one of the chip's states, as the server's `?state=` filter answers it
      return chip.state === state;
  }
}

export function filterChips(chips: readonly Chip[], filter: ChipFilter): Chip[] {
  const terms = (filter.node ?? "")
    .toLowerCase()
    .split(/[\s,]+/)
    .filter(Boolean);
  const type = filter.type ?? "";
  const state = filter.state ?? "all";
  const roomFor = filter.roomFor ?? "";
  if (!terms.length && !type && state === "all" && !roomFor) return chips as Chip[];
  const wanted = (c: Chip) => filter.templates?.get(c.type)?.find((t) => t.name === roomFor);
  return chips.filter((c) => {
    if (type && c.type !== type) return false;
    if (!matchesState(c, state, filter.templates)) return false;
    if (roomFor) {
      const t = wanted(c);
      if (!t || slicesThatFit(c, t) === 0) return false;
    }
    return !terms.length || terms.some((t) => c.node.toLowerCase().includes(t));
  });
}

// --- metrics and aggregation ------------------------------------------------------

export type Metric = "memory" | "slots" | "aicore" | "aicpu";

/** The metrics a heat map colours by (their words: the chips catalog's metric.<key>). */
export const METRICS: Metric[] = ["memory", "slots", "aicore", "aicpu"];

export function usedTotal(chip: Chip, metric: Metric): [number, number] {
  switch (metric) {
    case "memory":
      return [chip.memUsed, chip.mem];
    case "slots":
      return [chip.slotsUsed, chip.slots];
    case "aicore":
      return [chip.coreUsed, chip.core];
    case "aicpu":
      return [chip.cpuUsed, chip.cpu];
  }
}

export function fraction(chip: Chip, metric: Metric): number {
  const [used, total] = usedTotal(chip, metric);
  return total > 0 ? Math.min(1, used / total) : 0;
}

export interface Totals {
  chips: number;
  healthy: number;
  unhealthy: number;
  cordoned: number;
  /** chips with no free slot or no free memory */
  full: number;
  /** slices = slots in use */
  slices: number;
  memUsed: number;
  mem: number;
  slotsUsed: number;
  slots: number;
  coreUsed: number;
  core: number;
  cpuUsed: number;
  cpu: number;
  /** free memory on chips that can take a slice (healthy, not cordoned, not isolated): what the allocator can use */
  memFree: number;
  /** free slots on those chips */
  slotsFree: number;
}

export function emptyTotals(): Totals {
  return {
    chips: 0,
    healthy: 0,
    unhealthy: 0,
    cordoned: 0,
    full: 0,
    slices: 0,
    memUsed: 0,
    mem: 0,
    slotsUsed: 0,
    slots: 0,
    coreUsed: 0,
    core: 0,
    cpuUsed: 0,
    cpu: 0,
    memFree: 0,
    slotsFree: 0,
  };
}

export function addChip(t: Totals, c: Chip): void {
  t.chips++;
  if (c.healthy) t.healthy++;
  else t.unhealthy++;
  if (c.cordoned) t.cordoned++;
  if (c.slotsUsed >= c.slots || c.memUsed >= c.mem) t.full++;
  t.slices += c.slotsUsed;
  t.memUsed += c.memUsed;
  t.mem += c.mem;
  t.slotsUsed += c.slotsUsed;
  t.slots += c.slots;
  t.coreUsed += c.coreUsed;
  t.core += c.core;
  t.cpuUsed += c.cpuUsed;
  t.cpu += c.cpu;
  if (inService(c)) {
    t.memFree += Math.max(0, c.mem - c.memUsed);
    t.slotsFree += Math.max(0, c.slots - c.slotsUsed);
  }
}

export function totalsUsedTotal(t: Totals, metric: Metric): [number, number] {
  switch (metric) {
    case "memory":
      return [t.memUsed, t.mem];
    case "slots":
      return [t.slotsUsed, t.slots];
    case "aicore":
      return [t.coreUsed, t.core];
    case "aicpu":
      return [t.cpuUsed, t.cpu];
  }
}

/** Totals per chip type (sorted by type), computed from the chips themselves so they stay live. */
export function totalsByType(chips: Iterable<Chip>): Map<string, Totals> {
  const out = new Map<string, Totals>();
  for (const c of chips) {
    let t = out.get(c.type);
    if (!t) out.set(c.type, (t = emptyTotals()));
    addChip(t, c);
  }
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export interface NodeGroup {
  node: string;
  chips: Chip[];
  types: string[];
  totals: Totals;
}

/** Chips grouped by node, in node order (input order is kept inside a node). */
export function groupByNode(chips: readonly Chip[]): NodeGroup[] {
  const groups = new Map<string, NodeGroup>();
  for (const c of chips) {
    let g = groups.get(c.node);
    if (!g) groups.set(c.node, (g = { node: c.node, chips: [], types: [], totals: emptyTotals() }));
    g.chips.push(c);
    if (!g.types.includes(c.type)) g.types.push(c.type);
    addChip(g.totals, c);
  }
  return [...groups.values()].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
}

// --- sorting the chips table ---------------------------------------------------------

export type SortKey = "node" | "type" | "memory" | "slots" | "aicore" | "aicpu" | "health";
export interface Sort {
  key: SortKey;
  dir: 1 | -1;
}

export function sortChips(chips: readonly Chip[], sort: Sort): Chip[] {
  if (sort.key === "node" && sort.dir === 1) return chips as Chip[];
  const list = [...chips];
  const d = sort.dir;
  const by = (value: (c: Chip) => number) => (a: Chip, b: Chip) =>
    (value(a) - value(b)) * d || naturalOrder(a, b);
  switch (sort.key) {
    case "node":
      list.sort((a, b) => naturalOrder(a, b) * d);
      break;
    case "type":
      list.sort((a, b) => (a.type < b.type ? -d : a.type > b.type ? d : naturalOrder(a, b)));
      break;
    case "health":
      // by state, in the order of the server's rules, then sick before well
      list.sort(by((c) => STATE_ORDER.indexOf(c.state) * 2 + (c.healthy ? 1 : 0)));
      break;
    default: {
      const metric = sort.key as Metric;
      list.sort(by((c) => fraction(c, metric)));
    }
  }
  return list;
}
