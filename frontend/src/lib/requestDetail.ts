// Logic of the request detail and submit pages: the timeline of a request, why
// its chip is not known yet, and the body the submit form posts.

import type { CiRequest, RequestState } from "../api/types";
import { t } from "../i18n/intl";

export interface TimelineStep {
  key: "submitted" | "reserved" | "admitted" | "running" | "finished";
  label: string;
  /** when it happened; null: not (yet) */
  at: string | null;
  hint: string;
}

const FINISHED: ReadonlySet<RequestState> = new Set(["succeeded", "failed", "cancelled", "expired"]);

export function isFinished(state: RequestState): boolean {
  return FINISHED.has(state);
}

type Timed = Pick<CiRequest, "state" | "created_at" | "admitted_at" | "running_at" | "finished_at"> & {
  reserved_at?: string | null;
};

/**
 * The steps of a request's life, in order, with their times. A request sent
 * back to pending (its pod lost, a bind that timed out) loses its reserved and
 * admitted times: the timeline shows where it is now, not every try
 * (`attempts` counts them).
 */
export function timeline(r: Timed): TimelineStep[] {
  return [
    { key: "submitted", label: t("requests.step.submitted"), at: r.created_at, hint: t("requests.step.submittedHint") },
    { key: "reserved", label: t("requests.step.reserved"), at: r.reserved_at ?? null, hint: t("requests.step.reservedHint") },
    { key: "admitted", label: t("requests.step.admitted"), at: r.admitted_at, hint: t("requests.step.admittedHint") },
    { key: "running", label: t("requests.step.running"), at: r.running_at, hint: t("requests.step.runningHint") },
    {
      key: "finished",
      label: isFinished(r.state) ? t("requests.step.finishedAs", { state: t(`requests.state.${r.state}`) }) : t("requests.step.finished"),
      at: r.finished_at,
      hint: t("requests.step.finishedHint"),
    },
  ];
}

/** The step the request is at now (the last one with a time). */
export function currentStep(steps: readonly TimelineStep[]): TimelineStep["key"] {
  let current: TimelineStep["key"] = "submitted";
  for (const step of steps) if (step.at) current = step.key;
  return current;
}

/** Why a request shows no chip (null when it shows one). */
export function chipNote(r: Pick<CiRequest, "state" | "chip_uuid">): string | null {
  if (r.chip_uuid) return null;
  switch (r.state) {
    case "pending":
      return t("requests.chipNote.pending");
    case "reserved":
    case "admitted":
      return t("requests.chipNote.beforeBind");
    case "running":
      return t("requests.chipNote.running");
    default:
      return t("requests.chipNote.never");
  }
}

/**
 * Words of a command line, split on spaces; "double" or 'single' quotes keep
 * spaces inside a word (`sh -c "sleep 30"` -> ["sh", "-c", "sleep 30"]).
 */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: string | null = null;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = null;
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

export type SizeKind = "memory" | "template" | "whole_card";

export interface SubmitForm {
  cluster: number;
  namespace: string;
  queue: string;
  chip_type: string;
  size: SizeKind;
  memory: string;
  template: string;
  priority: string;
  image: string;
  command: string;
  time_limit: string;
}

/**
 * The POST /api/requests/ body of the form. Numbers the browser could not read
 * are sent as they are, so the API names the field in its 400.
 */
export function submitBody(form: SubmitForm): Record<string, unknown> {
  const body: Record<string, unknown> = {
    cluster: String(form.cluster),
    namespace: form.namespace.trim(),
    chip_type: form.chip_type,
    workload: { image: form.image.trim(), command: splitWords(form.command) },
  };
  if (form.queue.trim()) body.queue = form.queue.trim();
  if (form.priority) body.priority = form.priority;
  if (form.size === "memory") body.memory = numberOrText(form.memory);
  else if (form.size === "template") body.template = form.template;
  else body.whole_card = true;
  if (form.time_limit.trim()) body.time_limit_seconds = numberOrText(form.time_limit);
  return body;
}

function numberOrText(value: string): number | string | null {
  const text = value.trim();
  if (!text) return null;
  return /^\d+$/.test(text) ? Number(text) : text;
}
