// Logic of the Queues and PriorityClasses pages: a queue's quota rows (limit
// next to what it holds), its Volcano Queue state, its pod policy in words, the
// quota editor's rows, and PriorityClasses in the order the scheduler ranks them.
// Its words are in the UI's current language (i18n/intl's `t`).

import type { PriorityClass, Queue, VolcanoQueue } from "../api/types";
import { t } from "../i18n/intl";
import { parsePath, type ApiErrorBody } from "./errors";

/** One chip type of a queue: its limits (null: unlimited) and what its requests hold and wait for. */
export interface QuotaRow {
  chipType: string;
  memoryLimit: number | null;
  slotsLimit: number | null;
  memoryUsed: number;
  slotsUsed: number;
  pending: number;
  running: number;
}

/**
 * Quotas and usage side by side, by chip type: a chip type with usage but no
 * quota is unlimited, and still shown, since its requests hold room.
 */
export function quotaRows(queue: Pick<Queue, "quotas" | "usage">): QuotaRow[] {
  const rows = new Map<string, QuotaRow>();
  const row = (chipType: string) => {
    let found = rows.get(chipType);
    if (!found) {
      found = { chipType, memoryLimit: null, slotsLimit: null, memoryUsed: 0, slotsUsed: 0, pending: 0, running: 0 };
      rows.set(chipType, found);
    }
    return found;
  };
  for (const q of queue.quotas) Object.assign(row(q.chip_type), { memoryLimit: q.memory_limit, slotsLimit: q.slots_limit });
  for (const u of queue.usage)
    Object.assign(row(u.chip_type), { memoryUsed: u.memory_used, slotsUsed: u.slots_used, pending: u.pending, running: u.running });
  return [...rows.values()].sort((a, b) => a.chipType.localeCompare(b.chipType));
}

/** Requests of the queue waiting and running, over every chip type. */
export function queueCounts(queue: Pick<Queue, "usage">): { pending: number; running: number } {
  return queue.usage.reduce((acc, u) => ({ pending: acc.pending + u.pending, running: acc.running + u.running }), { pending: 0, running: 0 });
}

/** How the Volcano Queue's state reads: badge kind, label and what to say under it. */
export function volcanoView(v: VolcanoQueue | null): { kind: string; label: string; detail: string } {
  // Volcano's own states (Open, Closed, Closing) show as Volcano names them; its reason comes from the API.
  if (!v) return { kind: "", label: t("queues.volcano.unknown"), detail: "" };
  if (v.state === "Open") return { kind: "ok", label: v.state, detail: v.managed ? t("queues.volcano.managed") : "" };
  if (v.state === "Missing") return { kind: "warn", label: t("queues.volcano.missing"), detail: v.reason };
  if (!v.state) return { kind: "", label: t("queues.volcano.unknown"), detail: v.reason };
  return { kind: "fail", label: v.state, detail: v.reason };
}

/**
 * The pod policy in words: empty namespace and ServiceAccount lists mean only
 * `default`; empty Secret and ConfigMap lists mean none may be referenced.
 */
export function policySummary(
  queue: Pick<Queue, "allowed_namespaces" | "pod_security" | "allowed_service_accounts" | "allowed_secrets" | "allowed_config_maps">,
): {
  namespaces: string;
  podSecurity: string;
  serviceAccounts: string;
  secrets: string;
  configMaps: string;
} {
  const list = (items: string[], empty: string) => (items.length ? items.join(", ") : empty);
  const defaultOnly = t("queues.policy.defaultOnly");
  const none = t("queues.policy.none");
  return {
    namespaces: list(queue.allowed_namespaces, defaultOnly),
    podSecurity: queue.pod_security,
    serviceAccounts: list(queue.allowed_service_accounts, defaultOnly),
    secrets: list(queue.allowed_secrets, none),
    configMaps: list(queue.allowed_config_maps, none),
  };
}

/**
 * Who may submit to the queue and with which priority, in words: admins
 * always; others when it is open to all or names them (as users or groups).
 */
export function accessSummary(
  queue: Pick<Queue, "open_to_all" | "members" | "member_groups" | "max_priority" | "system_priority_classes">,
): { who: string; priority: string } {
  const named = [...queue.members, ...queue.member_groups.map((g) => t("queues.access.group", { name: g }))];
  const who = queue.open_to_all
    ? t("queues.access.everyone")
    : named.length
      ? t("queues.access.members", { names: named.join(", ") })
      : t("queues.access.adminsOnly");
  // As a string: the ceiling reads as the number an admin types, without grouping.
  const ceiling = String(queue.max_priority ?? 1000000000);
  const system = queue.system_priority_classes;
  const priority = system.length ? t("queues.access.upToAnd", { ceiling, classes: system.join(", ") }) : t("queues.access.upTo", { ceiling });
  return { who, priority };
}

/** "a, b ,c" -> ["a", "b", "c"] (blanks dropped). */
export function splitList(text: string): string[] {
  return text
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A row of the quota editor, as typed: limits are text, empty is unlimited. */
export interface QuotaDraft {
  chip_type: string;
  memory_limit: string;
  slots_limit: string;
}

export function quotaDrafts(queue: Pick<Queue, "quotas">): QuotaDraft[] {
  const text = (n: number | null | undefined) => (n === null || n === undefined ? "" : String(n));
  return queue.quotas.map((q) => ({ chip_type: q.chip_type, memory_limit: text(q.memory_limit), slots_limit: text(q.slots_limit) }));
}

/**
 * The PATCH body of the quota editor. A limit that is not a whole number is
 * sent as typed, so that the API's 400 names the field (one place says what is
 * valid).
 */
export function quotaBody(drafts: readonly QuotaDraft[]): { quotas: { chip_type: string; memory_limit: number | string | null; slots_limit: number | string | null }[] } {
  const value = (text: string) => {
    const t = text.trim();
    if (!t) return null;
    return /^\d+$/.test(t) ? Number(t) : t;
  };
  return {
    quotas: drafts.map((d) => ({ chip_type: d.chip_type, memory_limit: value(d.memory_limit), slots_limit: value(d.slots_limit) })),
  };
}

/** Errors of the quota editor: `quotas[1].memory_limit` lands on row 1's field; the rest above the rows. */
export function quotaErrors(body: ApiErrorBody | null | undefined): { rows: Record<string, string[]>; form: string[] } {
  const out: { rows: Record<string, string[]>; form: string[] } = { rows: {}, form: [] };
  if (!body) return out;
  const entries = Object.entries(body.errors ?? {});
  for (const [key, value] of entries) {
    const messages = Array.isArray(value) ? value.map(String) : [String(value)];
    // The service says `quotas[1].chip_type`, DRF's nested validation `quotas.1.slots_limit`.
    const path = parsePath(key);
    const index = typeof path[1] === "number" ? path[1] : /^\d+$/.test(String(path[1])) ? Number(path[1]) : null;
    if (path[0] === "quotas" && index !== null && typeof path[2] === "string") {
      (out.rows[`${index}.${path[2]}`] ??= []).push(...messages);
    } else {
      out.form.push(...messages.map((m) => (key === "quotas" || key === "non_field_errors" ? m : `${key}: ${m}`)));
    }
  }
  if (entries.length === 0 && body.message) out.form.push(body.message);
  return out;
}

/** Highest value first, as the scheduler ranks them; equal values by name. */
export function byValue<T extends Pick<PriorityClass, "value" | "name">>(classes: readonly T[]): T[] {
  return [...classes].sort((a, b) => b.value - a.value || a.name.localeCompare(b.name));
}
