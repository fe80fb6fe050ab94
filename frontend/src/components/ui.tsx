// Small shared pieces: usage bars, badges, banners, diffs, modals, fields.

import { useEffect, useState, type CSSProperties, type ReactNode } from "react";
import { int, usageLevel, pct } from "../lib/format";
import { useT } from "../i18n/I18nProvider";
import { Icon } from "./Icon";
import { errorText } from "../lib/errors";
import type { ConnectionState } from "../live/store";

export function UsageBar({
  used,
  total,
  text,
  thin,
  title,
}: {
  used: number;
  total: number;
  text?: string;
  thin?: boolean;
  title?: string;
}) {
  const f = pct(used, total);
  return (
    <div className={`bar${thin ? " thin" : ""}`} title={title ?? `${used} / ${total}`}>
      <div className={`fill ${usageLevel(f)}`} style={{ width: `${(f * 100).toFixed(1)}%` }} />
      {!thin && <span className="text">{text ?? `${Math.round(f * 100)}%`}</span>}
    </div>
  );
}

/**
 * UsageBar's look in one element, for rows of virtualised tables: the fill is
 * the element's ::before instead of a child box, so a row that scrolls into
 * view creates, styles and lays out one element per bar instead of three (at
 * a fast scroll a table mounts some twenty rows a frame). It does not animate
 * a change of width as UsageBar does, nor cut a text too long for it.
 */
export function CellBar({ used, total, text }: { used: number; total: number; text: string }) {
  const f = pct(used, total);
  return (
    <span className={`cbar ${usageLevel(f)}`} style={{ "--f": f.toFixed(3) } as CSSProperties} title={`${used} / ${total}`}>
      {text}
    </span>
  );
}

export function Badge({ kind, children, title }: { kind?: string; children: ReactNode; title?: string }) {
  return (
    <span className={`badge ${kind ?? ""}`} title={title}>
      {children}
    </span>
  );
}

export function Banner({
  kind,
  children,
  action,
  testId,
}: {
  kind: "info" | "warn" | "error" | "ok";
  children: ReactNode;
  action?: ReactNode;
  testId?: string;
}) {
  return (
    <div className={`banner ${kind}`} role={kind === "error" ? "alert" : "status"} data-testid={testId}>
      <span className="banner-icon">
        <Icon name={kind} />
      </span>
      <div className="grow">{children}</div>
      {action}
    </div>
  );
}

/** The message id of each connection state. */
const CONNECTION_TEXT: Record<ConnectionState, string> = {
  connecting: "ui.connection.connecting",
  live: "ui.connection.live",
  reconnecting: "ui.connection.reconnecting",
  denied: "ui.connection.denied",
  missing: "ui.connection.missing",
  closed: "ui.connection.closed",
};

export function ConnectionDot({
  state,
  retryAt,
  now,
  onRetry,
}: {
  state: ConnectionState;
  retryAt: number | null;
  now: number;
  onRetry?: () => void;
}) {
  const t = useT();
  const wait = retryAt ? Math.max(0, Math.ceil((retryAt - now) / 1000)) : 0;
  return (
    <span className="conn" data-testid="connection" data-state={state} title={t("ui.connection.title")}>
      <span className={`dot ${state}`} />
      {t(CONNECTION_TEXT[state])}
      {state === "reconnecting" && wait > 0 && <span className="muted">{t("ui.connection.retryIn", { seconds: wait })}</span>}
      {state === "reconnecting" && onRetry && (
        <button className="btn link small" onClick={onRetry}>
          {t("ui.connection.retryNow")}
        </button>
      )}
    </span>
  );
}

export function syncKind(state: string): string {
  return { ok: "ok", stale: "warn", error: "fail", never: "" }[state] ?? "";
}

export function SyncBadge({ state }: { state: string }) {
  const t = useT();
  return (
    <Badge kind={syncKind(state)} title={t("ui.sync.title")}>
      {t("ui.sync.state", { state })}
    </Badge>
  );
}

export function ErrorNote({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const t = useT();
  if (!error) return null;
  return (
    <Banner
      kind="error"
      action={
        onRetry && (
          <button className="btn small" onClick={onRetry}>
            {t("ui.retry")}
          </button>
        )
      }
    >
      {errorText(error)}
    </Banner>
  );
}

export function Loading({ label }: { label?: string }) {
  const t = useT();
  return (
    <div className="empty">
      <span className="spinner" /> {label ?? t("ui.loading")}…
    </div>
  );
}

export function Kpi({
  label,
  value,
  hint,
  tone,
  testId,
}: {
  label: string;
  value: ReactNode;
  hint?: ReactNode;
  tone?: "bad" | "warn";
  testId?: string;
}) {
  return (
    <div className={`kpi ${tone ?? ""}`} data-testid={testId}>
      <div className="label">{label}</div>
      <div className="value">{value}</div>
      {hint !== undefined && <div className="hint">{hint}</div>}
    </div>
  );
}

export function DiffView({ diff, empty }: { diff: string; empty?: string }) {
  const t = useT();
  if (!diff.trim()) return <div className="empty">{empty ?? t("ui.noDifferences")}</div>;
  return (
    <pre className="diff" data-testid="diff">
      {diff.split("\n").map((line, i) => {
        const kind = line.startsWith("+++") || line.startsWith("---")
          ? "meta"
          : line.startsWith("@@")
            ? "hunk"
            : line.startsWith("+")
              ? "add"
              : line.startsWith("-")
                ? "del"
                : "";
        return (
          <div key={i} className={kind}>
            {line || " "}
          </div>
        );
      })}
    </pre>
  );
}

function useEscape(onClose: () => void) {
  useEffect(() => {
    const handler = (e: KeyboardEvent) => {
      if (e.key === "Escape") onClose();
    };
    window.addEventListener("keydown", handler);
    return () => window.removeEventListener("keydown", handler);
  }, [onClose]);
}

export function Drawer({ title, onClose, children, actions }: { title: ReactNode; onClose: () => void; children: ReactNode; actions?: ReactNode }) {
  const t = useT();
  useEscape(onClose);
  return (
    <>
      <div className="drawer-backdrop" onClick={onClose} />
      <aside className="drawer" role="dialog" aria-label={typeof title === "string" ? title : t("ui.details")} data-testid="drawer">
        <div className="drawer-head">
          <h2>{title}</h2>
          <div className="drawer-actions">
            {actions}
            <button className="btn small" onClick={onClose} aria-label={t("ui.close")}>
              ✕
            </button>
          </div>
        </div>
        <div className="drawer-body">{children}</div>
      </aside>
    </>
  );
}

export function Modal({ title, onClose, children, footer }: { title: ReactNode; onClose: () => void; children: ReactNode; footer?: ReactNode }) {
  const t = useT();
  useEscape(onClose);
  return (
    <div className="modal" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="panel" role="dialog">
        <div className="panel-head">
          <h2>{title}</h2>
          <div className="right">
            <button className="btn small" onClick={onClose} aria-label={t("ui.close")}>
              ✕
            </button>
          </div>
        </div>
        <div className="panel-body">{children}</div>
        {footer && <div className="panel-body panel-foot">{footer}</div>}
      </div>
    </div>
  );
}

export function Field({
  label,
  errors,
  hint,
  children,
}: {
  label: string;
  errors?: string[];
  hint?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label>{label}</label>
      {children}
      {errors?.map((e, i) => (
        <div key={i} className="field-error" role="alert">
          {e}
        </div>
      ))}
      {hint && !errors?.length && <div className="field-hint">{hint}</div>}
    </div>
  );
}

export function Pager({
  page,
  count,
  pageSize,
  onPage,
}: {
  page: number;
  count: number;
  pageSize: number;
  onPage: (page: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(count / pageSize));
  const from = count ? (page - 1) * pageSize + 1 : 0;
  const to = Math.min(count, page * pageSize);
  const t = useT();
  return (
    <div className="pager">
      <span>{t("ui.pager.range", { from: int(from), to: int(to), count: int(count) })}</span>
      <span className="push-right" />
      <button className="btn small" disabled={page <= 1} onClick={() => onPage(1)} aria-label={t("ui.pager.first")}>
        «
      </button>
      <button className="btn small" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        {t("ui.pager.prev")}
      </button>
      <span>{t("ui.pager.page", { page: int(page), pages: int(pages) })}</span>
      <button className="btn small" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        {t("ui.pager.next")}
      </button>
    </div>
  );
}

export function Segmented<T extends string>({
  value,
  options,
  onChange,
  label,
}: {
  value: T;
  options: { key: T; label: string }[];
  onChange: (v: T) => void;
  label?: string;
}) {
  return (
    <div className="segmented" role="group" aria-label={label}>
      {options.map((o) => (
        <button type="button" key={o.key} className={o.key === value ? "on" : ""} onClick={() => onChange(o.key)} aria-pressed={o.key === value}>
          {o.label}
        </button>
      ))}
    </div>
  );
}

/** A long identifier (a chip UUID): shown whole or shortened, with a button that copies it whole. */
export function CopyText({ value, shown, testId }: { value: string; shown?: string; testId?: string }) {
  const t = useT();
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
      window.setTimeout(() => setCopied(false), 1500);
    } catch {
      // No clipboard (plain http outside localhost): select the text instead.
      window.getSelection()?.selectAllChildren(document.querySelector(`[data-copy="${CSS.escape(value)}"]`) ?? document.body);
    }
  };
  return (
    <span className="copy-text" data-testid={testId}>
      <span className="mono" title={value} data-copy={value}>
        {shown ?? value}
      </span>
      <button
        type="button"
        className="btn tiny"
        onClick={(e) => {
          e.stopPropagation();
          void copy();
        }}
        aria-label={t("ui.copyValue", { value })}
        title={t("ui.copy")}
      >
        {copied ? t("ui.copied") : t("ui.copy")}
      </button>
    </span>
  );
}
