// The printable monthly report (/cost/monthly?month=YYYY-MM): the month's
// usage and cost grouped by namespace, by queue and by chip type on one page.
// Printing hides the navigation and the controls (@media print in styles.css).

import { api, qs } from "../api/client";
import type { ReportGroupBy, UsageReport } from "../api/types";
import { ErrorNote, Loading } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { dateTime } from "../lib/format";
import { Link, useQueryParam } from "../lib/router";
import { useApi } from "../lib/useApi";
import { GROUPS, isMonth, monthLabel, monthOf, reportUrl } from "../lib/usage";
import { useClusters } from "../state/cluster";
import { useSession } from "../state/session";
import { PeriodLine, ReportNotes, ReportTable } from "./Cost";

export function CostMonthlyPage() {
  const t = useT();
  const { cluster } = useClusters();
  const { can } = useSession();
  const [monthParam, setMonth] = useQueryParam("month", monthOf(new Date()));
  const month = isMonth(monthParam) ? monthParam : monthOf(new Date());
  const first = useReport(cluster!.id, "namespace", month);
  const second = useReport(cluster!.id, "queue", month);
  const third = useReport(cluster!.id, "chip_type", month);
  const answers = [first, second, third];
  const any = answers.find((a) => a.data)?.data;

  return (
    <div className="monthly-report" data-testid="monthly-report">
      <div className="page-head">
        <h1>{t("cost.monthly.title", { month: monthLabel(month) })}</h1>
        <span className="sub">{cluster!.name}</span>
        <div className="actions no-print">
          <input
            className="input"
            type="month"
            value={month}
            onChange={(e) => e.target.value && setMonth(e.target.value)}
            aria-label={t("cost.monthAria")}
            data-testid="monthly-month"
          />
          <Link to={`/cost${qs({ month })}`}>{t("cost.monthly.back")}</Link>
          <button className="btn small primary" onClick={() => window.print()}>
            {t("cost.monthly.print")}
          </button>
        </div>
      </div>
      {any && (
        <>
          <PeriodLine report={any} />
          <div className="report-notes">
            <ReportNotes report={any} fix={t(can("admin") ? "cost.monthly.fixAdmin" : "cost.monthly.fixAsk")} />
          </div>
        </>
      )}
      {GROUPS.map((g, i) => {
        const answer = answers[i];
        return (
          <section key={g} className="panel report-section" data-testid={`monthly-${g}`}>
            <div className="panel-head">
              <h2>{t(`cost.by.${g}`)}</h2>
            </div>
            <ErrorNote error={answer.error} onRetry={answer.reload} />
            {answer.data ? <ReportTable report={answer.data} /> : answer.loading && <Loading />}
          </section>
        );
      })}
      <div className="muted mt-12 tiny-text">
        {t("cost.monthly.footer", { asOf: any ? "yes" : "no", when: any ? dateTime(any.metrics.queried_at) : "" })}
      </div>
    </div>
  );
}

function useReport(clusterId: number, groupBy: ReportGroupBy, month: string) {
  return useApi((signal) => api.get<UsageReport>(reportUrl(clusterId, groupBy, { kind: "month", month }), signal), [clusterId, groupBy, month]);
}
