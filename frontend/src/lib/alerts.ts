// The alerts' figures the panel and the page share: counts by severity, badges,
// and the line that says why a list is empty or partial.

import type { AlertList, PortalAlert } from "../api/types";
import { t } from "../i18n/intl";

export const SEVERITIES = ["critical", "warning", "info"] as const;

/** Firing (not silenced or inhibited) alerts per severity. */
export function firingBySeverity(alerts: PortalAlert[]): Record<string, number> {
  const counts: Record<string, number> = { critical: 0, warning: 0, info: 0 };
  for (const alert of alerts) {
    if (alert.state === "firing") counts[alert.severity] = (counts[alert.severity] ?? 0) + 1;
  }
  return counts;
}

export function severityBadge(severity: string): string {
  return severity === "critical" ? "error" : severity === "warning" ? "warn" : "info";
}

/** The message ids of the severities and states the API sends (another is shown as it comes). */
export const SEVERITY_LABEL: Record<string, string> = {
  critical: "alerts.severity.critical",
  warning: "alerts.severity.warning",
  info: "alerts.severity.info",
};
export const STATE_LABEL: Record<string, string> = {
  firing: "alerts.state.firing",
  silenced: "alerts.state.silenced",
  suppressed: "alerts.state.suppressed",
};

/** A severity or a state in the UI's language (`labels`: SEVERITY_LABEL or STATE_LABEL). */
export function labelOf(labels: Record<string, string>, value: string): string {
  return labels[value] ? t(labels[value]) : value;
}

/** What the answer's source means for what is shown, in the UI's language; null when nothing needs saying. */
export function sourceNote(list: AlertList): { kind: "error" | "info"; text: string } | null {
  // the API's message is in the UI's language already (Accept-Language)
  if (list.error) return { kind: "error", text: t("alerts.noneShown", { error: list.error.message }) };
  if (!list.notifications_configured) {
    const text = t("alerts.notConfigured");
    if (!list.not_evaluated.length) return { kind: "info", text };
    return { kind: "info", text: `${text} ${t("alerts.notEvaluated", { names: list.not_evaluated.join(", "), count: list.not_evaluated.length })}` };
  }
  return null;
}

/** The durations offered by "Silence for…", as the API writes them; `label` is the message id of the unit, of `count`. */
export const SILENCE_DURATIONS: { value: string; label: string; count: number }[] = [
  { value: "30m", label: "alerts.minutes", count: 30 },
  { value: "2h", label: "alerts.hours", count: 2 },
  { value: "8h", label: "alerts.hours", count: 8 },
  { value: "1d", label: "alerts.days", count: 1 },
  { value: "3d", label: "alerts.days", count: 3 },
  { value: "7d", label: "alerts.days", count: 7 },
  { value: "30d", label: "alerts.days", count: 30 },
];

/** The labels that name an alert's object, for a line under its summary. */
export function objectLabels(alert: PortalAlert): string {
  return Object.entries(alert.labels)
    .filter(([name]) => name !== "alertname" && name !== "severity")
    .map(([name, value]) => `${name}=${value}`)
    .join(" · ");
}
