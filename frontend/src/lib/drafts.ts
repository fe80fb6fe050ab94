// Form drafts: text the user typed, compared with what the server holds.

export type Values = Record<string, string>;

export interface Draft {
  base: Values;
  value: Values;
}

export function toValues(obj: object, fields: readonly string[]): Values {
  const out: Values = {};
  const rec = obj as Record<string, unknown>;
  for (const f of fields) {
    const v = rec[f];
    out[f] = v === null || v === undefined ? "" : String(v);
  }
  return out;
}

export function isDirty(d: Draft): boolean {
  return Object.keys(d.value).some((k) => d.value[k] !== d.base[k]);
}

export function changedFields(d: Draft): string[] {
  return Object.keys(d.value).filter((k) => d.value[k] !== d.base[k]);
}

/** A new server value arrived: keep the user's edits, move the base. */
export function rebase(d: Draft | undefined, fresh: Values): Draft {
  if (!d || !isDirty(d)) return { base: fresh, value: { ...fresh } };
  return { base: fresh, value: d.value };
}

/**
 * Text of an integer field for the API: "" -> null when the field may be
 * empty, digits -> a number, anything else unchanged (the API names the error).
 */
export function parseIntField(text: string, nullable: boolean): number | string | null {
  const t = text.trim();
  if (t === "") return nullable ? null : "";
  if (/^-?\d+$/.test(t)) return Number(t);
  return t;
}

/** Numbers the fit picture can use from a draft ("" or junk -> 0 / null). */
export function draftNumber(text: string | undefined): number {
  const n = Number((text ?? "").trim());
  return Number.isFinite(n) && (text ?? "").trim() !== "" ? n : 0;
}

export function draftNullable(text: string | undefined): number | null {
  const t = (text ?? "").trim();
  if (t === "") return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

/** "allowed: vir01, vir02" in an API message -> the names, for suggestions. */
export function allowedNames(messages: readonly string[] | undefined): string[] {
  for (const m of messages ?? []) {
    const match = /allowed: ([^)]+)\)/.exec(m);
    if (match) return match[1].split(",").map((s) => s.trim()).filter(Boolean);
  }
  return [];
}
