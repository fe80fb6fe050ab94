// A draft of the device plugin's node config (hami-device-node-config's
// node-config.yaml) as the Node config page edits it: per node a slicing mode,
// a slot count and chips to ignore by UUID. Turned into the entries the
// what-if takes (`{"nodes": [...]}`, the plugin's own keys), and the API's
// errors on those entries (`nodes[1].vDeviceCount`) back onto the node and
// field they name. Pure; unit-tested.

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
}

/** One entry of node-config.yaml's `nodes`, with the plugin's key names. */
export interface NodeEntry {
  name: string;
  "hami-vnpu-core"?: boolean;
  vDeviceCount?: number;
  filterDevices?: { uuid: string[] };
}

export function emptyDraft(name: string): NodeDraft {
  return { name, mode: "keep", slots: "", ignore: [] };
}

/** The slot count's own check before anything is sent (the API checks the rest). */
export function slotsError(slots: string): string | null {
  if (slots.trim() === "") return null;
  return /^\d+$/.test(slots.trim()) && Number(slots) > 0 ? null : "A whole number above 0, or empty for the default.";
}

/** A node's draft as its entry: only the keys it sets. */
export function toEntry(draft: NodeDraft): NodeEntry {
  const entry: NodeEntry = { name: draft.name };
  if (draft.mode !== "keep") entry["hami-vnpu-core"] = draft.mode === "hami-core";
  if (draft.slots.trim() !== "") entry.vDeviceCount = Number(draft.slots.trim());
  if (draft.ignore.length) entry.filterDevices = { uuid: [...draft.ignore].sort() };
  return entry;
}

/** The drafts as the what-if's `nodes`, in node order (an entry that sets nothing is still sent: the node is named). */
export function toEntries(drafts: readonly NodeDraft[]): NodeEntry[] {
  return [...drafts].sort((a, b) => a.name.localeCompare(b.name)).map(toEntry);
}

const FIELD_OF_KEY: Record<string, keyof NodeDraft> = {
  "hami-vnpu-core": "mode",
  vDeviceCount: "slots",
  filterDevices: "ignore",
  name: "name",
};

/**
 * The API's errors (keys such as `nodes[1].vDeviceCount`,
 * `nodes[0].filterDevices.uuid[2]`, `nodes`) by node name and draft field;
 * what names no entry goes under "" (the form).
 */
export function errorsByNode(errors: Record<string, string[] | string> | undefined, entries: readonly NodeEntry[]): Map<string, Map<string, string[]>> {
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
