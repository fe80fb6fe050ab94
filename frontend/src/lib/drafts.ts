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

/**
 * Names to offer for one template of a chip type: the names the chip type
 * allows (`allowed_template_names` of the API) that no other template of it
 * uses, plus the template's own name. Sorted as the API sends them.
 */
export function templateNameOptions(allowed: readonly string[] | undefined, others: readonly string[], own = ""): string[] {
  const taken = new Set(others.map((n) => n.trim()).filter((n) => n && n !== own.trim()));
  return (allowed ?? []).filter((n) => !taken.has(n));
}

/**
 * Whether a typed name is one the chip type allows. Unknown (no list from the
 * API, or nothing typed yet) counts as allowed: the API has the last word.
 */
export function isAllowedName(name: string, allowed: readonly string[] | undefined): boolean {
  const t = name.trim();
  if (!t || !allowed?.length) return true;
  return allowed.includes(t);
}
