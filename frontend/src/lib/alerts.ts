// The alerts' figures the panel and the page share: counts by severity, badges,
// and the line that says why a list is empty or partial.

import type { AlertList, PortalAlert } from "../api/types";

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

/** What the answer's source means for what is shown; null when nothing needs saying. */
export function sourceNote(list: AlertList): { kind: "error" | "info"; text: string } | null {
  if (list.error) return { kind: "error", text: `No alerts shown: ${list.error.message}` };
  if (!list.notifications_configured) {
    const missing = list.not_evaluated.length ? ` ${list.not_evaluated.join(", ")} need Prometheus and are not shown.` : "";
    return {
      kind: "info",
      text: `Notifications are not configured (no ALERTMANAGER_URL): the portal evaluates these conditions itself, for display only, as true now.${missing}`,
    };
  }
  return null;
}

/** The durations offered by "Silence for…", as the API writes them. */
export const SILENCE_DURATIONS: { value: string; label: string }[] = [
  { value: "30m", label: "30 minutes" },
  { value: "2h", label: "2 hours" },
  { value: "8h", label: "8 hours" },
  { value: "1d", label: "1 day" },
  { value: "3d", label: "3 days" },
  { value: "7d", label: "7 days" },
  { value: "30d", label: "30 days" },
];

/** The labels that name an alert's object, for a line under its summary. */
export function objectLabels(alert: PortalAlert): string {
  return Object.entries(alert.labels)
    .filter(([name]) => name !== "alertname" && name !== "severity")
    .map(([name, value]) => `${name}=${value}`)
    .join(" · ");
}
