// A draft of the device plugin's node config (hami-device-node-config's
// node-config.yaml) as the Node config page edits it: per node a slicing mode,
// a slot count and chips to ignore by UUID, started from the live entries.
// Turned into the per-node edits validate and publish take (only what
// changed), and the API's errors (`nodes[1].vDeviceCount` of the text the
// edits make, or `nodes[0].v_device_count` of the edits) back onto the node
// and field they name. Pure; unit-tested.

import { t } from "../i18n/intl";
import { parsePath } from "./errors";

export type DraftMode = "keep" | "template" | "hami-core";

export interface NodeDraft {
  name: string;
  /** keep: no `hami-vnpu-core` key (the global `vnpus.hamiVnpuCore` applies) */
  mode: DraftMode;
  /** vDeviceCount as typed; "" = the default (memoryAllocatable over the smallest template) */
  slots: string;
  /** UUIDs for filterDevices.uuid (never by index: an index is a card id and can take two chips) */
  ignore: string[];
  /** drop the node's entry (the plugin runs on defaults there) */
  remove?: boolean;
}

/** A per-node edit as the publish and validate endpoints take it (`nodes: [...]`); null keeps a value. */
export interface NodeEdit {
  name: string;
  remove?: boolean;
  hami_vnpu_core?: boolean | null;
  /** 0 clears it (the plugin's default) */
  v_device_count?: number | null;
  filter_uuids?: string[] | null;
}

/** What the page knows of a node's live entry (GET .../node-config/'s `nodes`). */
export interface LiveEntry {
  name: string;
  has_entry: boolean;
  hami_vnpu_core: boolean | null;
  v_device_count: number | null;
  filter_uuids: readonly string[];
}

export function emptyDraft(name: string): NodeDraft {
  return { name, mode: "keep", slots: "", ignore: [] };
}

/** A node's live entry as a draft: what the editor starts from. */
export function draftOf(entry: LiveEntry): NodeDraft {
  return {
    name: entry.name,
    mode: entry.hami_vnpu_core === null ? "keep" : entry.hami_vnpu_core ? "hami-core" : "template",
    slots: entry.v_device_count ? String(entry.v_device_count) : "",
    ignore: [...entry.filter_uuids].sort(),
  };
}

/** The drafts of the nodes that have an entry in the live node config, in node order. */
export function liveDrafts(entries: readonly LiveEntry[]): NodeDraft[] {
  return entries
    .filter((e) => e.has_entry)
    .map(draftOf)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The slot count's own check before anything is sent (the API checks the rest), in the UI's language. */
export function slotsError(slots: string): string | null {
  if (slots.trim() === "") return null;
  return /^\d+$/.test(slots.trim()) && Number(slots) > 0 ? null : t("nodeConfig.draft.slotsError");
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  const x = [...a].sort();
  const y = [...b].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/**
 * The edits that turn the live entries (`bases`, by node) into the drafts: only
 * what changed, only the values that changed (null keeps a value, so a hand
 * edit of another key is not overwritten). A node drafted with `remove` loses
 * its entry; a node whose entry is gone from the drafts keeps it (untouched).
 */
export function toEdits(drafts: readonly NodeDraft[], bases: ReadonlyMap<string, NodeDraft>): NodeEdit[] {
  const edits: NodeEdit[] = [];
  for (const d of [...drafts].sort((a, b) => a.name.localeCompare(b.name))) {
    const base = bases.get(d.name);
    if (d.remove) {
      if (base) edits.push({ name: d.name, remove: true });
      continue;
    }
    const edit: NodeEdit = { name: d.name };
    if (!base || d.mode !== base.mode) edit.hami_vnpu_core = d.mode === "keep" ? null : d.mode === "hami-core";
    if (!base || d.slots.trim() !== base.slots) {
      if (d.slots.trim() !== "") edit.v_device_count = Number(d.slots.trim());
      else if (base?.slots) edit.v_device_count = 0;
    }
    if (!base ? d.ignore.length > 0 : !sameList(d.ignore, base.ignore)) edit.filter_uuids = [...d.ignore].sort();
    if (!base || Object.keys(edit).length > 1) edits.push(edit);
  }
  return edits;
}

/** The node names of a node-config text's entries, in order (the API's paths `nodes[i]` index them); [] if it is not JSON. */
export function entryNames(text: string): { name: string }[] {
  try {
    const doc = JSON.parse(text) as { nodes?: { name?: unknown }[] };
    return (doc.nodes ?? []).map((n) => ({ name: String(n?.name ?? "") }));
  } catch {
    return [];
  }
}

/** Issues (`{field, message}`, the validation's) as the error record errorsByNode reads. */
export function issueRecord(issues: readonly { field: string; message: string }[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const i of issues) (out[i.field || "non_field_errors"] ??= []).push(i.message);
  return out;
}

const FIELD_OF_KEY: Record<string, keyof NodeDraft> = {
  "hami-vnpu-core": "mode",
  vDeviceCount: "slots",
  filterDevices: "ignore",
  // the edits' own names (a 400 of the publish's input names them)
  hami_vnpu_core: "mode",
  v_device_count: "slots",
  filter_uuids: "ignore",
  name: "name",
};

/**
 * The API's errors (keys such as `nodes[1].vDeviceCount`,
 * `nodes[0].filterDevices.uuid[2]`, `nodes`) by node name and draft field;
 * what names no entry goes under "" (the form).
 */
export function errorsByNode(errors: Record<string, string[] | string> | undefined, entries: readonly { name: string }[]): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  const put = (node: string, field: string, messages: string[]) => {
    const fields = out.get(node) ?? new Map<string, string[]>();
    fields.set(field, [...(fields.get(field) ?? []), ...messages]);
    out.set(node, fields);
  };
  for (const [key, value] of Object.entries(errors ?? {})) {
    const messages = Array.isArray(value) ? value.map(String) : [String(value)];
    const path = parsePath(key);
    const entry = path[0] === "nodes" && typeof path[1] === "number" ? entries[path[1]] : undefined;
    if (!entry) {
      put("", "", messages.map((m) => (key === "non_field_errors" ? m : `${key}: ${m}`)));
      continue;
    }
    const first = path.slice(2).find((p): p is string => typeof p === "string");
    put(entry.name, (first && FIELD_OF_KEY[first]) || "", messages);
  }
  return out;
}
