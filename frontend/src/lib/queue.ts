// Logic of the Requests and Preemptions pages: state badges, who may cancel or
// decide, lost running time, the reason-required decision form.

import type { CiRequest, PreemptionProposal, ProposalState, RequestState, Role } from "../api/types";
import { t } from "../i18n/intl";
import { allows } from "../state/session";
import { duration, mb } from "./format";

export const REQUEST_STATES: readonly RequestState[] = ["pending", "reserved", "admitted", "running", "succeeded", "failed", "cancelled", "expired"];
export const PROPOSAL_STATES: readonly ProposalState[] = ["pending", "approved", "rejected", "evicting", "done", "failed", "superseded"];

/** Requests a cancel may still stop (not finished yet). */
const CANCELLABLE: ReadonlySet<RequestState> = new Set(["pending", "reserved", "admitted", "running"]);

export function requestBadge(state: string): string {
  switch (state) {
    case "running":
    case "succeeded":
    case "done":
    case "approved":
      return "ok";
    case "pending":
    case "reserved":
    case "admitted":
    case "evicting":
      return "info";
    case "failed":
    case "rejected":
      return "fail";
    case "expired":
      return "warn";
    default:
      return "";
  }
}

/** CI and operators cancel their own unfinished requests; admins any; viewers none. */
export function canCancel(role: Role | null | undefined, username: string, r: Pick<CiRequest, "state" | "submitted_by">): boolean {
  if (!CANCELLABLE.has(r.state)) return false;
  if (allows(role, "admin")) return true;
  return allows(role, "ci") && r.submitted_by === username;
}

/** Only admins approve or reject, and only a proposal still waiting for a decision. */
export function canDecide(role: Role | null | undefined, p: Pick<PreemptionProposal, "state">): boolean {
  return allows(role, "admin") && p.state === "pending";
}

/** Running time a victim loses: "–" when unknown, "0s" when it had not started, else "3h 2m". */
export function lostTime(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "–";
  return duration(seconds);
}

/** What a request asked for: a template, whole card, or memory (HAMi picks the template). */
export function asked(r: Pick<CiRequest, "template" | "memory" | "whole_card">): string {
  if (r.whole_card) return t("requests.wholeCard");
  if (r.template) return r.template;
  if (r.memory !== null && r.memory !== undefined) return mb(r.memory);
  return "–";
}

/** What it got: "vir02 · 6 GiB", or "–" before booking. */
export function booked(r: Pick<CiRequest, "template_booked" | "memory_booked">): string {
  const parts = [r.template_booked, r.memory_booked !== null && r.memory_booked !== undefined ? mb(r.memory_booked) : ""].filter(Boolean);
  return parts.length ? parts.join(" · ") : "–";
}

/** The reason of an approve/reject: required; returns the error to show, or null. */
export function reasonError(reason: string): string | null {
  return reason.trim() ? null : t("requests.reasonRequired");
}
