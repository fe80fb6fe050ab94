// Server-side sorting of a paginated list (DRF's OrderingFilter): `?ordering=field`
// or `-field`, comma-separated tie-breakers so that pages do not shuffle rows
// that compare equal.

export interface Ordering<F extends string> {
  field: F;
  /** 1 ascending, -1 descending */
  dir: 1 | -1;
}

/** `"-memory"` -> {field: "memory", dir: -1}; anything not in `fields` -> null (the server's default). */
export function parseOrdering<F extends string>(text: string, fields: readonly F[]): Ordering<F> | null {
  const t = text.trim();
  const desc = t.startsWith("-");
  const field = (desc ? t.slice(1) : t) as F;
  return fields.includes(field) ? { field, dir: desc ? -1 : 1 } : null;
}

export function orderingText<F extends string>(o: Ordering<F> | null): string {
  return o ? `${o.dir === -1 ? "-" : ""}${o.field}` : "";
}

/**
 * A click on a column: the same column flips direction, another one starts in
 * its first direction (text ascending, numbers and times usually descending).
 */
export function toggleOrdering<F extends string>(current: Ordering<F> | null, field: F, firstDir: 1 | -1 = 1): Ordering<F> {
  if (current?.field === field) return { field, dir: current.dir === 1 ? -1 : 1 };
  return { field, dir: firstDir };
}

/** The `ordering` query value: the chosen field, then the tie-breakers not already in it (ascending). */
export function orderingParam<F extends string>(o: Ordering<F> | null, tieBreakers: readonly F[]): string {
  if (!o) return "";
  return [orderingText(o), ...tieBreakers.filter((f) => f !== o.field)].join(",");
}
