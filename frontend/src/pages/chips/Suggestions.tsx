// The Nodes & chips page's suggestions (GET /api/clusters/<id>/chip-suggestions/):
// chips the device plugin has registered sick for longer than the setting,
// offered for isolation with the slices they hold, and isolated chips healthy
// again, offered for restore. Each "Isolate…" / "Restore…" opens that chip's
// drawer with its own dialog (pages/chips/ChipActions.tsx), so the act is
// the drawer's, with its preview and its reason.

import { api } from "../../api/client";
import type { ChipSuggestion, ChipSuggestions } from "../../api/types";
import { Badge } from "../../components/ui";
import { useT } from "../../i18n/I18nProvider";
import { ago, dateTime, duration } from "../../lib/format";
import { useApi, useLiveReload } from "../../lib/useApi";
import { useSession } from "../../state/session";

export function SuggestionsPanel({
  clusterId,
  tick,
  onAct,
}: {
  clusterId: number;
  /** changes when the chips change (a chip turned sick or was isolated) */
  tick: number;
  onAct: (chipId: number, act: "isolate" | "restore") => void;
}) {
  const t = useT();
  const { can } = useSession();
  const answer = useApi((signal) => api.get<ChipSuggestions>(`/api/clusters/${clusterId}/chip-suggestions/`, signal), [clusterId]);
  // A chip becomes due by time alone (sick past the setting): poll as well.
  useLiveReload(answer.reload, tick, 10_000);
  const data = answer.data;
  if (!data) return null;
  const now = Date.now();
  const auto = [data.rules.auto_isolate && "isolate", data.rules.auto_restore && "restore"].filter((a): a is string => !!a);
  return (
    <div className="panel" data-testid="chip-suggestions">
      <div className="panel-head">
        <h2>{t("chips.suggest.title")}</h2>
        <span className="right">
          {t("chips.suggest.rules", { after: duration(data.rules.suggest_after_seconds), restore: duration(data.rules.restore_after_seconds) })}
          {auto.length > 0 && ` · ${t("chips.suggest.auto", { acts: auto.map((a) => t(`chips.suggest.action.${a}`)).join(", ") })}`}
        </span>
      </div>
      <div className="panel-body">
        {data.suggestions.length === 0 && <div className="muted">{t("chips.suggest.none")}</div>}
        {data.suggestions.length > 0 && (
          <ul className="plain-list">
            {data.suggestions.map((s) => (
              <SuggestionLine key={`${s.action}-${s.chip.id}`} s={s} now={now} canAct={can("operator")} onAct={onAct} />
            ))}
          </ul>
        )}
        {!data.restore_available && (
          <div className="muted small-text mt-6" data-testid="restore-unavailable">
            {t("chips.suggest.noRestore", { reason: data.restore_reason })}
          </div>
        )}
      </div>
    </div>
  );
}

function SuggestionLine({
  s,
  now,
  canAct,
  onAct,
}: {
  s: ChipSuggestion;
  now: number;
  canAct: boolean;
  onAct: (chipId: number, act: "isolate" | "restore") => void;
}) {
  const t = useT();
  return (
    <li className="mb-10" data-testid={`suggestion-${s.chip.id}`}>
      <Badge kind={s.action === "isolate" ? "hot" : "ok"}>{t(`chips.suggest.action.${s.action}`)}</Badge>{" "}
      <b>
        {s.chip.node} · {s.chip.common_word} #{s.chip.index}
      </b>{" "}
      <span className="mono muted tiny-text">{s.chip.uuid}</span>{" "}
      <span className="muted" title={dateTime(s.since)}>
        {t("chips.standing.since", { ago: ago(s.since, now) })}
      </span>
      {canAct && (
        <button className={`btn small${s.action === "isolate" ? " danger" : ""} ml-8`} onClick={() => onAct(s.chip.id, s.action)} data-testid={`suggestion-act-${s.chip.id}`}>
          {t(`chips.suggest.button.${s.action}`)}
        </button>
      )}
      <div className="small-text">{s.why}</div>
      {s.slices.length > 0 && (
        <div className="small-text muted">
          {t("chips.suggest.holds", { count: s.slices.length })}{" "}
          <span className="mono">
            {s.slices
              .map((x) => {
                const pod = `${x.namespace}/${x.pod_name}`;
                return x.request ? t("chips.suggest.sliceOfRequest", { pod, id: x.request }) : pod;
              })
              .join(", ")}
          </span>
        </div>
      )}
    </li>
  );
}
