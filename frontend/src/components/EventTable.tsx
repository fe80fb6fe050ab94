// A table of things that happened: audit events, a chip's placements, a
// request's timeline, device-config versions, sync watches. Columns are
// described once (header, cell, tooltip); the table draws the head, the rows,
// an empty state, and an optional details row under a row ("Changes").

import { Fragment, useState, type ReactNode } from "react";
import { useT } from "../i18n/I18nProvider";
import { t as translate } from "../i18n/intl";
import { ago, dateTime } from "../lib/format";

/** The widest a column may grow (classes `maxw-<px>` in styles.css); longer text wraps. */
export type CellMaxWidth = 260 | 360 | 380 | 520;

export interface EventColumn<T> {
  /** The header's text; "" for a column without one (buttons). */
  header: ReactNode;
  /** A tooltip on the header. */
  headerTitle?: string;
  /** Numbers: right-aligned, header and cells. */
  num?: boolean;
  /** Classes of the cells (`nowrap`, `mono`...). */
  className?: string;
  maxWidth?: CellMaxWidth;
  cell: (row: T) => ReactNode;
  /** A tooltip on the cell (the exact time of a relative one). */
  title?: (row: T) => string | undefined;
  /** A test id on the cell. */
  testId?: (row: T) => string | undefined;
}

/** A details row that a button in the last column opens under its row, one at a time. */
export interface EventDetails<T> {
  /** Whether the row has details (no button otherwise). */
  has: (row: T) => boolean;
  render: (row: T) => ReactNode;
  /** The button's text, closed and open. */
  show?: string;
  hide?: string;
}

export interface EventTableProps<T> {
  rows: readonly T[];
  rowKey: (row: T) => string | number;
  columns: readonly EventColumn<T>[];
  testId?: string;
  rowTestId?: (row: T) => string | undefined;
  /** A row's classes (`selected`). */
  rowClass?: (row: T) => string | undefined;
  /** A row's `data-*` attributes, without the prefix: `{ done: "yes" }`. */
  rowData?: (row: T) => Record<string, string>;
  /** Draw the header row (a timeline has none). */
  head?: boolean;
  /** Inside a scroll box of its own (`.table-wrap`, headers stick). */
  scroll?: boolean;
  /** Shown instead of the table when there is no row; without it an empty table shows. */
  empty?: ReactNode;
  emptyTestId?: string;
  details?: EventDetails<T>;
}

function cx(...names: (string | false | undefined)[]): string | undefined {
  const text = names.filter(Boolean).join(" ");
  return text || undefined;
}

function dataAttributes(data: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data ?? {})) out[`data-${k}`] = v;
  return out;
}

export function EventTable<T>({
  rows,
  rowKey,
  columns,
  testId,
  rowTestId,
  rowClass,
  rowData,
  head = true,
  scroll = false,
  empty,
  emptyTestId,
  details,
}: EventTableProps<T>) {
  const t = useT();
  const [open, setOpen] = useState<string | number | null>(null);
  if (rows.length === 0 && empty !== undefined) {
    return (
      <div className="empty" data-testid={emptyTestId}>
        {empty}
      </div>
    );
  }
  const all: readonly EventColumn<T>[] = details
    ? [
        ...columns,
        {
          header: "",
          cell: (row) => {
            if (!details.has(row)) return null;
            const key = rowKey(row);
            return (
              <button className="btn small" onClick={() => setOpen(open === key ? null : key)}>
                {open === key ? (details.hide ?? t("audit.details.hide")) : (details.show ?? t("audit.details.show"))}
              </button>
            );
          },
        },
      ]
    : columns;
  const table = (
    <table className="data" data-testid={testId}>
      {head && (
        <thead>
          <tr>
            {all.map((c, i) => (
              <th key={i} className={c.num ? "num" : undefined} title={c.headerTitle}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
      )}
      <tbody>
        {rows.map((row) => {
          const key = rowKey(row);
          const opened = details !== undefined && open === key;
          return (
            <Fragment key={key}>
              <tr className={cx(rowClass?.(row), opened && "selected")} data-testid={rowTestId?.(row)} {...dataAttributes(rowData?.(row))}>
                {all.map((c, i) => (
                  <td
                    key={i}
                    className={cx(c.num && "num", c.className, c.maxWidth && `maxw-${c.maxWidth}`)}
                    title={c.title?.(row)}
                    data-testid={c.testId?.(row)}
                  >
                    {c.cell(row)}
                  </td>
                ))}
              </tr>
              {opened && (
                <tr>
                  <td colSpan={all.length} className="event-details">
                    {details.render(row)}
                  </td>
                </tr>
              )}
            </Fragment>
          );
        })}
      </tbody>
    </table>
  );
  return scroll ? <div className="table-wrap">{table}</div> : table;
}

/**
 * A "When" column. With `now` the time is relative ("5m ago") and exact in the
 * tooltip; without it, exact.
 */
export function whenColumn<T>(
  at: (row: T) => string | null | undefined,
  { header, now, nowrap = true }: { header?: string; now?: number; nowrap?: boolean } = {},
): EventColumn<T> {
  return {
    // Called while a page renders: the current language is the page's.
    header: header ?? translate("audit.when"),
    className: nowrap ? "nowrap" : undefined,
    cell: (row) => (now === undefined ? dateTime(at(row)) : ago(at(row), now)),
    title: now === undefined ? undefined : (row) => dateTime(at(row)),
  };
}

/** A free text that may be missing (a reason): the text, or a muted dash. */
export function textOrDash(text: string | null | undefined): ReactNode {
  return text || <span className="muted">–</span>;
}
