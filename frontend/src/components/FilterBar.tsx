// The bar above a list that filters it: text boxes, selects and check boxes on
// the left; on the right a summary ("12 of 80 chips"), a spinner while the
// list loads, and the page's own buttons. Every list page had written the bar
// out, with its own debounce of the text box.

import { useEffect, useState, type ReactNode } from "react";
import { useT } from "../i18n/I18nProvider";
import { useDebounced } from "../lib/useApi";

export function FilterBar({
  children,
  busy = false,
  summary,
  actions,
}: {
  /** The filters, left to right. */
  children: ReactNode;
  /** The list is loading: a spinner shows after the summary. */
  busy?: boolean;
  /** What the filters leave, on the right ("12 of 80 chips"). */
  summary?: ReactNode;
  /** Buttons and toggles of the page, at the far right. */
  actions?: ReactNode;
}) {
  return (
    <div className="toolbar">
      {children}
      <span className="grow" />
      {summary}
      {busy && <span className="spinner" />}
      {actions}
    </div>
  );
}

/**
 * For a paged list: `refilter(set)` is `set` that also goes back to page 1,
 * since the page the list was on may not exist under the new filter.
 */
export function backToPageOne(setPage: (page: string) => void): (set: (value: string) => void) => (value: string) => void {
  return (set) => (value) => {
    set(value);
    setPage("1");
  };
}

/** The widths of the text boxes of the bars (classes `w-<px>` in styles.css). */
export type FilterWidth = 130 | 220 | 240 | 250 | 300 | 320;

/**
 * A text filter. It keeps what is typed and calls `onChange` once typing has
 * stopped for `debounceMs`, and only with a value other than `value`; when
 * `value` changes from outside (a link, the back button) the box follows it.
 */
export function TextFilter({
  label,
  value,
  onChange,
  placeholder,
  search = false,
  width,
  debounceMs = 250,
  testId,
}: {
  /** The box's accessible name (aria-label). */
  label: string;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  /** An `<input type="search">` (a clear button in most browsers). */
  search?: boolean;
  width?: FilterWidth;
  debounceMs?: number;
  testId?: string;
}) {
  const [input, setInput] = useState(value);
  const typed = useDebounced(input, debounceMs);
  useEffect(() => {
    if (typed !== value) onChange(typed);
  }, [typed]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => setInput(value), [value]);
  return (
    <input
      className={width ? `input w-${width}` : "input"}
      type={search ? "search" : undefined}
      placeholder={placeholder}
      value={input}
      onChange={(e) => setInput(e.target.value)}
      aria-label={label}
      data-testid={testId}
    />
  );
}

/** An option of a select: its value, shown as itself, or a value and its text. */
export type FilterOption = string | { value: string; label: string };

/** Options under a heading (`<optgroup>`). */
export interface FilterOptionGroup {
  group: string;
  options: readonly FilterOption[];
}

const optionValue = (o: FilterOption) => (typeof o === "string" ? o : o.value);
const optionLabel = (o: FilterOption) => (typeof o === "string" ? o : o.label);

function Options({ options }: { options: readonly FilterOption[] }) {
  return (
    <>
      {options.map((o) => (
        <option key={optionValue(o)} value={optionValue(o)}>
          {optionLabel(o)}
        </option>
      ))}
    </>
  );
}

/**
 * A select filter. `all` is the text of a first option with the empty value
 * ("All chip types"), which means no filter; the caller's `onChange` takes the
 * new value at once (and goes back to page 1 where the list is paged).
 */
export function SelectFilter({
  label,
  value,
  onChange,
  options = [],
  groups = [],
  all,
  testId,
}: {
  /** The select's accessible name (aria-label). */
  label: string;
  value: string;
  onChange: (value: string) => void;
  options?: readonly FilterOption[];
  /** Option groups, after `options`. */
  groups?: readonly FilterOptionGroup[];
  all?: string;
  testId?: string;
}) {
  return (
    <select className="select" value={value} onChange={(e) => onChange(e.target.value)} aria-label={label} data-testid={testId}>
      {all !== undefined && <option value="">{all}</option>}
      <Options options={options} />
      {groups.map((g) => (
        <optgroup key={g.group} label={g.group}>
          <Options options={g.options} />
        </optgroup>
      ))}
    </select>
  );
}

/** A state filter for a paged list: "All states" or one of `states`. */
export function StateFilter({
  value,
  states,
  onChange,
  testId,
}: {
  value: string;
  states: readonly string[];
  onChange: (state: string) => void;
  testId?: string;
}) {
  const t = useT();
  return <SelectFilter label={t("ui.filter.state")} value={value} onChange={onChange} options={states} all={t("ui.filter.allStates")} testId={testId} />;
}

/** A list narrowed to one thing by a link ("request #3"), with "show all" to widen it again. */
export function ScopeChip({ label, onClear, testId }: { label: string; onClear: () => void; testId?: string }) {
  const t = useT();
  return (
    <span data-testid={testId}>
      {label}{" "}
      <button className="btn small" onClick={onClear}>
        {t("ui.filter.showAll")}
      </button>
    </span>
  );
}

/** A check box with its text ("Flagged only"). */
export function CheckFilter({
  label,
  checked,
  onChange,
  testId,
}: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  testId?: string;
}) {
  return (
    <label className="inline-field nowrap">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} data-testid={testId} />
      {label}
    </label>
  );
}
