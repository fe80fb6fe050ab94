// The columns of a config's version history (the device config's on Templates,
// the node config's on Node config): A and B to compare, the number, source,
// who and when, why, and View / Roll back.

import type { EventColumn } from "./EventTable";
import { textOrDash } from "./EventTable";
import { Badge } from "./ui";
import { dateTime } from "../lib/format";
import { t } from "../i18n/intl";

const SOURCE_KIND: Record<string, string> = { published: "ok", adopted: "info", imported: "", observed: "warn" };
// The sources a version may have, by message id (another shows as the API names it).
const SOURCE_LABEL: Record<string, string> = {
  published: "versions.source.published",
  adopted: "versions.source.adopted",
  imported: "versions.source.imported",
  observed: "versions.source.observed",
};

/** A version's source in the UI's language ("published", "adopted"...; another as the API names it). */
export function versionSource(source: string): string {
  return SOURCE_LABEL[source] ? t(SOURCE_LABEL[source]) : source;
}

export interface VersionRow {
  number: number;
  source: string;
  author?: string | null;
  reason: string;
  created_at: string;
}

export function versionColumns<V extends VersionRow>({
  keyOf,
  a,
  b,
  setA,
  setB,
  newest,
  radioName,
  onView,
  onRollback,
  rollbackTestId,
}: {
  /** what A and B hold of a version (its id, or its number) */
  keyOf: (v: V) => number;
  a: number | null;
  b: number | null;
  setA: (key: number) => void;
  setB: (key: number) => void;
  newest: number | undefined;
  radioName: string;
  onView: (v: V) => void;
  /** null: the role may not roll back */
  onRollback: ((v: V) => void) | null;
  rollbackTestId: (v: V) => string;
}): EventColumn<V>[] {
  // Called while its page renders: `t` is the page's current language.
  return [
    { header: "A", cell: (v) => <input type="radio" name={`${radioName}a`} checked={a === keyOf(v)} onChange={() => setA(keyOf(v))} aria-label={t("versions.compareFrom", { number: v.number })} /> },
    { header: "B", cell: (v) => <input type="radio" name={`${radioName}b`} checked={b === keyOf(v)} onChange={() => setB(keyOf(v))} aria-label={t("versions.compareTo", { number: v.number })} /> },
    {
      header: t("versions.version"),
      cell: (v) => (
        <>
          <b>v{v.number}</b> {keyOf(v) === newest && <Badge kind="info">{t("versions.newest")}</Badge>}
        </>
      ),
    },
    { header: t("versions.source"), cell: (v) => <Badge kind={SOURCE_KIND[v.source]}>{versionSource(v.source)}</Badge> },
    {
      header: t("versions.whoWhen"),
      className: "nowrap",
      cell: (v) => (
        <>
          {v.author ?? <span className="muted">{v.source === "observed" ? t("versions.byHand") : t("versions.system")}</span>}
          <div className="muted tiny-text">{dateTime(v.created_at)}</div>
        </>
      ),
    },
    { header: t("versions.reason"), maxWidth: 260, cell: (v) => textOrDash(v.reason) },
    {
      header: "",
      className: "nowrap",
      cell: (v) => (
        <>
          <button className="btn small" onClick={() => onView(v)}>
            {t("versions.view")}
          </button>{" "}
          {onRollback && keyOf(v) !== newest && (
            <button className="btn small" onClick={() => onRollback(v)} data-testid={rollbackTestId(v)}>
              {t("versions.rollBack")}
            </button>
          )}
        </>
      ),
    },
  ];
}
