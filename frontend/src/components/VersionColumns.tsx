// The columns of a config's version history (the device config's on Templates,
// the node config's on Node config): A and B to compare, the number, source,
// who and when, why, and View / Roll back.

import type { EventColumn } from "./EventTable";
import { textOrDash } from "./EventTable";
import { Badge } from "./ui";
import { dateTime } from "../lib/format";

const SOURCE_KIND: Record<string, string> = { published: "ok", adopted: "info", imported: "", observed: "warn" };

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
  return [
    { header: "A", cell: (v) => <input type="radio" name={`${radioName}a`} checked={a === keyOf(v)} onChange={() => setA(keyOf(v))} aria-label={`compare from v${v.number}`} /> },
    { header: "B", cell: (v) => <input type="radio" name={`${radioName}b`} checked={b === keyOf(v)} onChange={() => setB(keyOf(v))} aria-label={`compare to v${v.number}`} /> },
    {
      header: "Version",
      cell: (v) => (
        <>
          <b>v{v.number}</b> {keyOf(v) === newest && <Badge kind="info">newest</Badge>}
        </>
      ),
    },
    { header: "Source", cell: (v) => <Badge kind={SOURCE_KIND[v.source]}>{v.source}</Badge> },
    {
      header: "Who · when",
      className: "nowrap",
      cell: (v) => (
        <>
          {v.author ?? <span className="muted">{v.source === "observed" ? "by hand" : "system"}</span>}
          <div className="muted tiny-text">{dateTime(v.created_at)}</div>
        </>
      ),
    },
    { header: "Reason", maxWidth: 260, cell: (v) => textOrDash(v.reason) },
    {
      header: "",
      className: "nowrap",
      cell: (v) => (
        <>
          <button className="btn small" onClick={() => onView(v)}>
            View
          </button>{" "}
          {onRollback && keyOf(v) !== newest && (
            <button className="btn small" onClick={() => onRollback(v)} data-testid={rollbackTestId(v)}>
              Roll back
            </button>
          )}
        </>
      ),
    },
  ];
}
