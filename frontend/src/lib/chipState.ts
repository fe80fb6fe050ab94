// A chip's state (the server's one word: apps/inventory/chipstate.py, carried
// by the live chip rows and GET /api/chips/) and what the UI does with it: its
// label and badge, its order, whether the allocator may place on it, and which
// acts the chip drawer offers. Pure; unit-tested.

import type { components } from "../api/schema";
import type { Role } from "../api/types";
import { allows } from "../state/session";

export type ChipStateName = components["schemas"]["ChipStateEnum"];

export interface StateLook {
  label: string;
  /** the badge's kind (styles.css .badge.<kind>) */
  badge: string;
  /** what it means, for titles and the legend */
  title: string;
}

export const STATE_LOOK: Record<ChipStateName, StateLook> = {
  healthy: { label: "healthy", badge: "ok", title: "in service: the allocator may place here" },
  unhealthy: { label: "unhealthy", badge: "hot", title: "the device plugin reports this chip unhealthy" },
  cordoned: { label: "cordoned", badge: "warn", title: "cordoned with no open drain: the portal places nothing here until an uncordon" },
  draining: { label: "draining", badge: "warn", title: "a drain is evicting the slices still on this chip" },
  drained: { label: "drained", badge: "info", title: "no slice left; still cordoned until an uncordon" },
  isolating: { label: "isolating", badge: "pending", title: "filtered in the node config; waiting for the device plugin to stop registering it" },
  isolated: { label: "isolated", badge: "isolated", title: "the device plugin no longer registers this chip: no scheduler can place here" },
  restoring: { label: "restoring", badge: "pending", title: "filter lifted; waiting for the device plugin to register it again" },
};

/** The states in the order of the server's rules, most specific first (also the sort order). */
export const STATE_ORDER: ChipStateName[] = ["isolating", "isolated", "restoring", "draining", "drained", "cordoned", "unhealthy", "healthy"];

const ISOLATION: ReadonlySet<ChipStateName> = new Set(["isolating", "isolated", "restoring"]);

/** An isolation or restore in flight or done: the device plugin's filter is involved. */
export function inIsolation(state: ChipStateName): boolean {
  return ISOLATION.has(state);
}

/** Waiting for sync's proof (the drawer shows what the portal saw). */
export function isPending(state: ChipStateName): boolean {
  return state === "isolating" || state === "restoring";
}

/** The state a server without the `state` column would have sent (health and cordon only). */
export function legacyState(healthy: boolean, cordoned: boolean): ChipStateName {
  return cordoned ? "cordoned" : healthy ? "healthy" : "unhealthy";
}

export type ChipAct = "isolate" | "restore" | "drain" | "uncordon";

/**
 * The acts the drawer offers for a chip in `state`, for `role` (operators and
 * admins act; the server decides in the end and its 409s are shown as they are).
 *
 * - isolate: a chip in service or held by the portal only (healthy, unhealthy,
 *   cordoned, draining, drained): isolation keeps every scheduler off it;
 * - restore: an isolated chip, or one whose isolation is still waiting for its proof;
 * - drain: a chip no open drain holds and that is not isolated or being restored
 *   (an isolating or isolated chip's slices still run: draining them is the way);
 * - uncordon: a cordoned chip (a drain's, open or ended).
 */
export function chipActs(state: ChipStateName, cordoned: boolean, role: Role | null | undefined): ChipAct[] {
  if (!allows(role, "operator")) return [];
  const acts: ChipAct[] = [];
  if (!inIsolation(state)) acts.push("isolate");
  if (state === "isolated" || state === "isolating") acts.push("restore");
  if (state !== "draining" && state !== "drained" && state !== "restoring") acts.push("drain");
  if (cordoned && !inIsolation(state)) acts.push("uncordon");
  return acts;
}
