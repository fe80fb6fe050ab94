// A chip's state (the server's one word: apps/inventory/chipstate.py, carried
// by the live chip rows and GET /api/chips/) and what the UI does with it: its
// label and badge, its order, whether the allocator may place on it, and which
// acts the chip drawer offers. Pure (its words come from the chipState
// catalog, in the current language); unit-tested.

import type { components } from "../api/schema";
import type { Role } from "../api/types";
import { t as currentT, type Translate } from "../i18n/intl";
import { allows } from "../state/session";

export type ChipStateName = components["schemas"]["ChipStateEnum"];

export interface StateLook {
  /** the state's word (catalog chipState.label.<state>, in the current language) */
  readonly label: string;
  /** the badge's kind (styles.css .badge.<kind>) */
  badge: string;
  /** what it means, for titles and the legend (catalog chipState.title.<state>) */
  readonly title: string;
}

const BADGE: Record<ChipStateName, string> = {
  healthy: "ok",
  unhealthy: "hot",
  cordoned: "warn",
  draining: "warn",
  drained: "info",
  isolating: "pending",
  isolated: "isolated",
  restoring: "pending",
};

/** The state's word in the UI's language (a component passes its `useT()`). */
export function stateLabel(state: ChipStateName, t: Translate = currentT): string {
  return t(`chipState.label.${state}`);
}

/** What the state means, for titles and the legend. */
export function stateTitle(state: ChipStateName, t: Translate = currentT): string {
  return t(`chipState.title.${state}`);
}

function look(state: ChipStateName): StateLook {
  return {
    badge: BADGE[state],
    get label() {
      return stateLabel(state);
    },
    get title() {
      return stateTitle(state);
    },
  };
}

/** Each state's badge, label and title (label and title follow the current language when read). */
export const STATE_LOOK: Record<ChipStateName, StateLook> = {
  healthy: look("healthy"),
  unhealthy: look("unhealthy"),
  cordoned: look("cordoned"),
  draining: look("draining"),
  drained: look("drained"),
  isolating: look("isolating"),
  isolated: look("isolated"),
  restoring: look("restoring"),
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
