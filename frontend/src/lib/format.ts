// Number, size and time formatting used across the pages, in the UI's
// language (i18n/intl: the current locale).

import { currentI18n, t } from "../i18n/intl";

/** MB (the unit of HAMi and the API) as a short human size: 3072 -> "3 GiB", 21527 -> "21.0 GiB". */
export function mb(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  const abs = Math.abs(value);
  if (abs >= 1024 * 1024) return `${(value / 1024 / 1024).toFixed(abs >= 10 * 1024 * 1024 ? 0 : 1)} TiB`;
  if (abs >= 1024) {
    const gib = value / 1024;
    return Number.isInteger(gib) ? `${gib} GiB` : `${gib.toFixed(1)} GiB`;
  }
  return `${value} MB`;
}

export function int(value: number | null | undefined): string {
  if (value === null || value === undefined) return "–";
  return currentI18n().intl.formatNumber(value);
}

export function pct(used: number, total: number): number {
  return total > 0 ? Math.max(0, Math.min(1, used / total)) : 0;
}

export function pctText(used: number, total: number): string {
  return total > 0 ? `${Math.round((used / total) * 100)}%` : "–";
}

/** "12s", "5m", "3h 2m", "4d" from seconds. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "–";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return t("format.seconds", { n: s });
  const m = Math.floor(s / 60);
  if (m < 60) return t("format.minutes", { n: m });
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? t("format.hoursMinutes", { h, m: m % 60 }) : t("format.hours", { n: h });
  return t("format.days", { n: Math.floor(h / 24) });
}

export function ageSeconds(iso: string | null | undefined, now: number = Date.now()): number {
  if (!iso) return Number.NaN;
  return (now - Date.parse(iso)) / 1000;
}

/** "5m ago" (or "–" when unknown). */
export function ago(iso: string | null | undefined, now: number = Date.now()): string {
  const s = ageSeconds(iso, now);
  return Number.isNaN(s) ? "–" : t("format.ago", { duration: duration(s) });
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return "–";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "–";
  // Numeric, 24-hour, seconds kept (events a second apart must read apart):
  // "12/07/2026, 08:53:37" in English, "2026/12/07 08:53:37" in Chinese.
  return currentI18n().intl.formatDate(d, {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  });
}

/** Usage colour scale: green below 60 %, amber to 85 %, red above (CSS variables). */
export function usageLevel(fraction: number): "ok" | "warn" | "hot" | "idle" {
  if (fraction <= 0) return "idle";
  if (fraction < 0.6) return "ok";
  if (fraction < 0.85) return "warn";
  return "hot";
}

/** A continuous green -> amber -> red colour for a fraction (heat maps). */
export function heatColor(fraction: number): string {
  if (fraction <= 0) return "#e7ebf0";
  const f = Math.max(0, Math.min(1, fraction));
  // hue 140 (green) -> 40 (amber) -> 0 (red)
  const hue = f < 0.6 ? 140 - (f / 0.6) * 95 : 45 - ((f - 0.6) / 0.4) * 45;
  const light = 58 - f * 12;
  return `hsl(${hue.toFixed(0)} 62% ${light.toFixed(0)}%)`;
}

/** A chip UUID's first group, enough to tell chips apart in a table: "94E3BF91-923A…" -> "94E3BF91…". */
export function shortUuid(uuid: string | null | undefined): string {
  if (!uuid) return "–";
  const head = uuid.split("-")[0];
  return head.length < uuid.length ? `${head}…` : uuid;
}
