// Cost: slice-hours booked and what they cost, over a month or a custom period,
// grouped by namespace, queue or chip type (GET /api/usage/report/), with a
// totals row, the same report as CSV, and the prices per chip type (admins
// edit them: PUT / DELETE /api/chip-prices/<common_word>/). The printable
// monthly report (all three groupings) is CostMonthly.tsx.

import { useMemo, useState } from "react";
import { api, qs } from "../api/client";
import type { ChipType, Page } from "../api/types";
import type { ChipPrice, ReportGroupBy, ReportRow, UsageReport } from "../api/types";
import { FilterBar } from "../components/FilterBar";
import { Badge, Banner, ErrorNote, Loading, Segmented } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { t as translate } from "../i18n/intl";
import { errorText } from "../lib/errors";
import { dateTime, int } from "../lib/format";
import { Link, navigate, useLocation, useQueryParam } from "../lib/router";
import { useApi } from "../lib/useApi";
import {
  GROUPS,
  hours,
  isGroupBy,
  metricsBanner,
  money,
  monthOf,
  parsePeriod,
  periodError,
  periodQuery,
  priceInput,
  reportUrl,
  utcText,
  type Period,
} from "../lib/usage";
import { useClusters } from "../state/cluster";
import { useSession } from "../state/session";

/** A grouping's name ("Namespace"), in the UI's language; a grouping of a newer server: its code. */
export function groupLabel(groupBy: ReportGroupBy): string {
  return GROUPS.includes(groupBy) ? translate(`cost.group.${groupBy}`) : groupBy;
}

/** Replace the period in the URL (the other parameters stay). */
function setPeriod(period: Period) {
  const params = new URLSearchParams(window.location.search);
  for (const key of ["period", "month", "start", "end"]) params.delete(key);
  if (period.kind === "month") params.set("month", period.month);
  else {
    params.set("period", "range");
    if (period.start) params.set("start", period.start);
    if (period.end) params.set("end", period.end);
  }
  navigate(`${window.location.pathname}?${params.toString()}`, { replace: true });
}

/** The first day of a month and the last ("2026-05" -> 2026-05-01, 2026-05-31). */
function monthDays(month: string): { start: string; end: string } {
  const [y, m] = month.split("-").map(Number);
  const last = new Date(y, m, 0).getDate();
  return { start: `${month}-01`, end: `${month}-${String(last).padStart(2, "0")}` };
}

export function CostPage() {
  const t = useT();
  const { cluster } = useClusters();
  const { can } = useSession();
  const id = cluster!.id;
  const { search } = useLocation();
  const period = parsePeriod(search);
  const [groupParam, setGroup] = useQueryParam("group", "namespace");
  const group: ReportGroupBy = isGroupBy(groupParam) ? groupParam : "namespace";
  const problem = periodError(period);
  const key = JSON.stringify(periodQuery(period));
  const [nonce, setNonce] = useState(0);
  const report = useApi(
    problem ? null : (signal) => api.get<UsageReport>(reportUrl(id, group, period), signal),
    [id, group, key, problem, nonce],
  );
  const month = period.kind === "month" ? period.month : period.start ? period.start.slice(0, 7) : monthOf(new Date());

  return (
    <>
      <div className="page-head">
        <h1>{t("cost.title")}</h1>
        <span className="sub">{t("cost.sub")}</span>
        <div className="actions">
          <Link to={`/cost/monthly${qs({ month })}`} data-testid="monthly-link">
            {t("cost.monthlyLink")}
          </Link>
        </div>
      </div>
      <div className="panel">
        <FilterBar
          busy={report.loading}
          actions={
            !problem && (
              <a className="btn small" href={reportUrl(id, group, period, "csv")} download data-testid="cost-csv">
                {t("cost.csv")}
              </a>
            )
          }
        >
          <Segmented
            value={period.kind}
            label={t("cost.period")}
            options={[
              { key: "month", label: t("cost.month") },
              { key: "range", label: t("cost.custom") },
            ]}
            onChange={(kind) => setPeriod(kind === "month" ? { kind: "month", month } : { kind: "range", ...monthDays(month) })}
          />
          {period.kind === "month" ? (
            <input
              className="input"
              type="month"
              value={period.month}
              onChange={(e) => e.target.value && setPeriod({ kind: "month", month: e.target.value })}
              aria-label={t("cost.monthAria")}
              data-testid="cost-month"
            />
          ) : (
            <>
              <input
                className="input"
                type="date"
                value={period.start}
                onChange={(e) => setPeriod({ ...period, start: e.target.value })}
                aria-label={t("cost.firstDay")}
                data-testid="cost-start"
              />
              <span className="muted">{t("cost.to")}</span>
              <input
                className="input"
                type="date"
                value={period.end}
                onChange={(e) => setPeriod({ ...period, end: e.target.value })}
                aria-label={t("cost.lastDay")}
                data-testid="cost-end"
              />
            </>
          )}
          <span className="muted" title={t("cost.utcTitle")}>
            {/* i18n-ignore: a time zone's name */}
            UTC
          </span>
          <span className="muted ml-8">{t("cost.groupBy")}</span>
          <Segmented
            value={group}
            label={t("cost.groupByAria")}
            options={GROUPS.map((g) => ({ key: g, label: groupLabel(g) }))}
            onChange={(g) => setGroup(g)}
          />
        </FilterBar>
        <div className="inset-top">
          {problem && (
            <Banner kind="info" testId="period-problem">
              {problem}
            </Banner>
          )}
          <ErrorNote error={report.error} onRetry={report.reload} />
          {report.data && (
            <ReportNotes report={report.data} fix={t(can("admin") ? "cost.fixAdmin" : "cost.fixAsk")} />
          )}
        </div>
        {problem ? null : !report.data ? (
          report.loading && <Loading label={t("cost.loading")} />
        ) : (
          <>
            <PeriodLine report={report.data} />
            <ReportTable report={report.data} testId="cost-table" />
          </>
        )}
      </div>
      <PricesPanel clusterId={id} onChanged={() => setNonce((n) => n + 1)} />
    </>
  );
}

/** The period the report covers, as the API resolved it. */
export function PeriodLine({ report }: { report: UsageReport }) {
  const t = useT();
  return (
    <div className="muted small-text period-line" data-testid="report-period">
      {t("cost.periodLine", { start: utcText(report.start), end: utcText(report.end), hours: hours(report.hours), currency: report.currency })}
    </div>
  );
}

/** Unpriced chip types, and used figures missing without Prometheus. */
export function ReportNotes({ report, fix }: { report: UsageReport; fix: string }) {
  const t = useT();
  const metrics = report.metrics.configured
    ? metricsBanner(report.metrics)
    : report.metrics.available
      ? null
      : t("cost.noMetrics");
  return (
    <>
      {report.unpriced.length > 0 && (
        <Banner kind="warn" testId="unpriced">
          {t("cost.unpriced", { types: report.unpriced.join(", "), fix })}
        </Banner>
      )}
      {metrics && (
        <Banner kind="info" testId="metrics-banner">
          {metrics}
        </Banner>
      )}
    </>
  );
}

function Cells({ row, currency }: { row: ReportRow; currency: string }) {
  return (
    <>
      <td className="num">{int(row.slices)}</td>
      <td className="num">{hours(row.slice_hours)}</td>
      <td className="num">{hours(row.card_hours)}</td>
      <td className="num">{hours(row.measured_slice_hours)}</td>
      <td className="num">{hours(row.used_slice_hours)}</td>
      <td className="num">{hours(row.idle_slice_hours)}</td>
      <td className="num">{money(row.cost, currency)}</td>
    </>
  );
}

/** One grouping: a row per group and the totals under them. */
export function ReportTable({ report, testId }: { report: UsageReport; testId?: string }) {
  const t = useT();
  const label = groupLabel(report.group_by);
  return (
    <div className="table-wrap report-table">
      <table className="data" data-testid={testId} data-group-by={report.group_by}>
        <thead>
          <tr>
            <th>{label}</th>
            <th className="num">{t("cost.col.slices")}</th>
            <th className="num" title={t("cost.col.sliceHoursTitle")}>
              {t("cost.col.sliceHours")}
            </th>
            <th className="num" title={t("cost.col.cardHoursTitle")}>
              {t("cost.col.cardHours")}
            </th>
            <th className="num" title={t("cost.col.measuredTitle")}>
              {t("cost.col.measured")}
            </th>
            <th className="num" title={t("cost.col.usedTitle")}>
              {t("cost.col.used")}
            </th>
            <th className="num" title={t("cost.col.idleTitle")}>
              {t("cost.col.idle")}
            </th>
            <th className="num">{t("cost.col.cost", { currency: report.currency })}</th>
          </tr>
        </thead>
        <tbody>
          {report.rows.length === 0 ? (
            <tr>
              <td colSpan={8} className="muted">
                {t("cost.nothingBooked")}
              </td>
            </tr>
          ) : (
            report.rows.map((r) => (
              <tr key={r.group} data-testid="report-row">
                <td>{r.group || <span className="muted">{t("cost.none")}</span>}</td>
                <Cells row={r} currency={report.currency} />
              </tr>
            ))
          )}
        </tbody>
        <tfoot>
          <tr className="totals" data-testid="report-totals">
            <td>{t("cost.total")}</td>
            <Cells row={report.totals} currency={report.currency} />
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

// --- prices ---------------------------------------------------------------------------

/** The API lists prices as a plain array (a page would do too). */
function priceList(answer: ChipPrice[] | Page<ChipPrice> | undefined): ChipPrice[] {
  if (!answer) return [];
  return Array.isArray(answer) ? answer : answer.results;
}

function PricesPanel({ clusterId, onChanged }: { clusterId: number; onChanged: () => void }) {
  const t = useT();
  const { can } = useSession();
  const admin = can("admin");
  const chipTypes = useApi(
    (signal) => api.get<Page<ChipType>>(`/api/chip-types/${qs({ cluster: clusterId, page_size: 200 })}`, signal),
    [clusterId],
  );
  const prices = useApi((signal) => api.get<ChipPrice[] | Page<ChipPrice>>("/api/chip-prices/", signal), []);
  const list = priceList(prices.data);
  const rows = useMemo(() => {
    const byWord = new Map(list.map((p) => [p.common_word, p]));
    const words = new Set([...(chipTypes.data?.results ?? []).map((c) => c.common_word), ...byWord.keys()]);
    return [...words].sort().map((w) => ({ word: w, price: byWord.get(w) ?? null }));
  }, [list, chipTypes.data]);
  const inCluster = useMemo(() => new Set((chipTypes.data?.results ?? []).map((c) => c.common_word)), [chipTypes.data]);
  const changed = () => {
    prices.reload();
    onChanged();
  };

  return (
    <div className="panel prices-panel" data-testid="prices">
      <div className="panel-head">
        <h2>{t("cost.prices")}</h2>
        <span className="muted">{t("cost.pricesSub")}</span>
      </div>
      <ErrorNote error={prices.error ?? chipTypes.error} onRetry={() => (prices.error ? prices.reload() : chipTypes.reload())} />
      {!prices.data && prices.loading ? (
        <Loading />
      ) : rows.length === 0 ? (
        <div className="empty">{t("cost.noChipType")}</div>
      ) : (
        <table className="data">
          <thead>
            <tr>
              <th>{t("cost.col.chipType")}</th>
              <th className="num">{t("cost.col.pricePerHour")}</th>
              <th>{t("cost.col.updated")}</th>
              {admin && <th />}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <PriceRow key={r.word} word={r.word} price={r.price} other={!inCluster.has(r.word)} admin={admin} onChanged={changed} />
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function PriceRow({
  word,
  price,
  other,
  admin,
  onChanged,
}: {
  word: string;
  price: ChipPrice | null;
  other: boolean;
  admin: boolean;
  onChanged: () => void;
}) {
  const t = useT();
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const url = `/api/chip-prices/${encodeURIComponent(word)}/`;
  const save = async () => {
    const value = priceInput(draft ?? "");
    if (value === null) {
      setError(t("cost.priceInvalid"));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.put<ChipPrice>(url, { price_per_hour: value });
      setDraft(null);
      onChanged();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (!window.confirm(t("cost.removeConfirm", { type: word }))) return;
    setBusy(true);
    setError(null);
    try {
      await api.del(url);
      onChanged();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <tr data-testid={`price-${word}`}>
      <td>
        {word} {other && <Badge title={t("cost.otherClusterTitle")}>{t("cost.otherCluster")}</Badge>}
      </td>
      <td className="num">
        {draft !== null ? (
          <input
            className={`input w-110 align-right${error ? " invalid" : ""}`}
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") void save();
              if (e.key === "Escape") {
                setDraft(null);
                setError(null);
              }
            }}
            aria-label={t("cost.priceOf", { type: word })}
            autoFocus
            data-testid={`price-input-${word}`}
          />
        ) : price ? (
          money(price.price_per_hour, price.currency, 4)
        ) : (
          <span className="muted">{t("cost.notSet")}</span>
        )}
        {error && (
          <div className="field-error" role="alert">
            {error}
          </div>
        )}
      </td>
      <td className="muted nowrap">{price ? dateTime(price.updated_at) : "—"}</td>
      {admin && (
        <td className="nowrap align-right">
          {draft !== null ? (
            <>
              <button className="btn small primary" disabled={busy} onClick={() => void save()} data-testid={`price-save-${word}`}>
                {t("cost.save")}
              </button>{" "}
              <button
                className="btn small"
                onClick={() => {
                  setDraft(null);
                  setError(null);
                }}
              >
                {t("cost.cancel")}
              </button>
            </>
          ) : (
            <>
              <button className="btn small" onClick={() => setDraft(price?.price_per_hour ?? "")} data-testid={`price-edit-${word}`}>
                {t(price ? "cost.edit" : "cost.setPrice")}
              </button>
              {price && (
                <>
                  {" "}
                  <button className="btn small danger" disabled={busy} onClick={() => void remove()} data-testid={`price-delete-${word}`}>
                    {t("cost.remove")}
                  </button>
                </>
              )}
            </>
          )}
        </td>
      )}
    </tr>
  );
}
