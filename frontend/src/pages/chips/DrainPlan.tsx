// A drain's plan and its dialog, for a chip (the chip drawer) or a whole node
// (the node panel's "Cordon and drain"): GET .../drain/ says every pod holding
// a slice there, the PodDisruptionBudgets that cover it and what will happen
// to it; POST .../drain/ {reason} cordons and drains.

import type { ReactNode } from "react";
import { api } from "../../api/client";
import type { Drain, DrainPlan } from "../../api/types";
import { ReasonModal } from "../../components/ReasonModal";
import { Badge, Banner, ErrorNote, Loading } from "../../components/ui";
import { useT } from "../../i18n/I18nProvider";
import { t as currentT, type Translate } from "../../i18n/intl";
import { mb } from "../../lib/format";
import { Link } from "../../lib/router";
import { useApi } from "../../lib/useApi";
import { useRichT } from "../../i18n/rich";

export type DrainTarget = { kind: "chips" | "nodes"; id: number };

/** What a drain will do: a banner when an admin must approve, then every pod and its fate. */
export function DrainPlanView({ plan }: { plan: DrainPlan }) {
  const t = useT();
  const rich = useRichT();
  const held = plan.drain !== null;
  return (
    <div data-testid="drain-plan">
      <p className="muted small-text">{t("chips.plan.explain", { count: plan.chips.length, node: plan.node })}</p>
      {held && (
        <Banner kind="warn">
          {rich("chips.plan.held", { id: plan.drain, link: (chunks: ReactNode[]) => <Link to={`/drains?drain=${plan.drain}`}>{chunks}</Link> })}
        </Banner>
      )}
      {plan.needs_approval && (
        <Banner kind="warn">
          <span data-testid="drain-needs-approval">{t("chips.plan.needsApproval")}</span>
        </Banner>
      )}
      {plan.pods.length === 0 ? (
        <div className="empty">{t("chips.plan.noSlice")}</div>
      ) : (
        <table className="data mb-12" data-testid="drain-plan-pods">
          <thead>
            <tr>
              <th>Pod</th>
              <th>{t("chips.plan.col.slices")}</th>
              <th>{t("chips.plan.col.whose")}</th>
              <th>{t("chips.plan.col.budgets")}</th>
              <th>{t("chips.plan.col.outcome")}</th>
            </tr>
          </thead>
          <tbody>
            {plan.pods.map((p) => (
              <tr key={`${p.namespace}/${p.pod}`}>
                <td>
                  <div className="mono">{p.pod}</div>
                  <div className="muted tiny-text">
                    {p.namespace} · {t("chips.plan.prio", { priority: p.priority })}
                    {p.priority_class ? ` (${p.priority_class})` : ""}
                  </div>
                </td>
                <td>
                  {p.templates.join(", ") || t("chips.wholeCard")} <span className="muted">{mb(p.memory)}</span>
                </td>
                <td>
                  {p.foreign ? (
                    <Badge kind="warn" title={t("chips.plan.foreignTitle")}>
                      {t("chips.plan.foreign")}
                    </Badge>
                  ) : (
                    <Link to={`/requests/${p.request}`}>{t("chips.requestNumber", { id: p.request })}</Link>
                  )}
                </td>
                <td>
                  {p.pdbs.length === 0 ? (
                    <span className="muted">{t("chips.plan.none")}</span>
                  ) : (
                    p.pdbs.map((b) => (
                      <div key={b.name} className="nowrap">
                        <span className="mono">{b.name}</span>{" "}
                        <Badge kind={b.disruptions_allowed > 0 ? "ok" : "hot"} title={t("chips.plan.allowedTitle")}>
                          {t("chips.plan.allowed", { count: b.disruptions_allowed })}
                        </Badge>
                      </div>
                    ))
                  )}
                </td>
                <td className="small-text">{p.outcome}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** "Drain" / "Cordon and drain": the plan first, then the reason; `onDone` gets the drain created. */
export function DrainDialog({ target, title, onClose, onDone }: { target: DrainTarget; title: string; onClose: () => void; onDone: (drain: Drain) => void }) {
  const t = useT();
  const path = `/api/${target.kind}/${target.id}/drain/`;
  const plan = useApi((signal) => api.get<DrainPlan>(path, signal), [path]);
  return (
    <ReasonModal
      title={title}
      verb={target.kind === "nodes" ? t("chips.node.drain") : t("chips.act.drain")}
      tone="danger"
      testId="drain"
      disabled={!plan.data || plan.data.drain !== null}
      onClose={onClose}
      submit={async (reason) => onDone(await api.post<Drain>(path, { reason }))}
    >
      <ErrorNote error={plan.error} onRetry={plan.reload} />
      {plan.data ? <DrainPlanView plan={plan.data} /> : !plan.error && <Loading label={t("chips.plan.loading")} />}
    </ReasonModal>
  );
}

/** One line on a drain: its state, and its progress (the API's words) or what waits. */
export function drainSummary(d: Pick<Drain, "id" | "state" | "progress" | "victims">, t: Translate = currentT): string {
  const waiting = d.state === "pending" && d.victims.some((v) => v.foreign && !v.approved);
  const line = t(waiting ? "chips.drainSummaryWaiting" : "chips.drainSummary", { id: d.id, state: t(`drains.state.${d.state}`) });
  return d.progress ? `${line} · ${d.progress}` : line;
}
