// The Nodes & chips page's suggestions (GET /api/clusters/<id>/chip-suggestions/):
// chips the device plugin has registered sick for longer than the setting,
// offered for isolation with the slices they hold, and isolated chips healthy
// again, offered for restore. Each "Isolate…" / "Restore…" opens that chip's
// drawer with its own dialog (pages/chips/ChipActions.tsx), so the act is
// the drawer's, with its preview and its reason.

import { api } from "../../api/client";
import type { ChipSuggestion, ChipSuggestions } from "../../api/types";
import { Badge } from "../../components/ui";
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
  const { can } = useSession();
  const answer = useApi((signal) => api.get<ChipSuggestions>(`/api/clusters/${clusterId}/chip-suggestions/`, signal), [clusterId]);
  // A chip becomes due by time alone (sick past the setting): poll as well.
  useLiveReload(answer.reload, tick, 10_000);
  const data = answer.data;
  if (!data) return null;
  const now = Date.now();
  return (
    <div className="panel" data-testid="chip-suggestions">
      <div className="panel-head">
        <h2>Suggestions</h2>
        <span className="right">
          isolate a chip sick for over {duration(data.rules.suggest_after_seconds)}; restore one healthy for {duration(data.rules.restore_after_seconds)}
          {data.rules.auto_isolate || data.rules.auto_restore
            ? ` · the policy acts on its own (${[data.rules.auto_isolate && "isolate", data.rules.auto_restore && "restore"].filter(Boolean).join(", ")})`
            : ""}
        </span>
      </div>
      <div className="panel-body">
        {data.suggestions.length === 0 && <div className="muted">No chip to isolate or restore.</div>}
        {data.suggestions.length > 0 && (
          <ul className="plain-list">
            {data.suggestions.map((s) => (
              <SuggestionLine key={`${s.action}-${s.chip.id}`} s={s} now={now} canAct={can("operator")} onAct={onAct} />
            ))}
          </ul>
        )}
        {!data.restore_available && (
          <div className="muted small-text mt-6" data-testid="restore-unavailable">
            No restore can be offered: {data.restore_reason}
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
  return (
    <li className="mb-10" data-testid={`suggestion-${s.chip.id}`}>
      <Badge kind={s.action === "isolate" ? "hot" : "ok"}>{s.action}</Badge>{" "}
      <b>
        {s.chip.node} · {s.chip.common_word} #{s.chip.index}
      </b>{" "}
      <span className="mono muted tiny-text">{s.chip.uuid}</span>{" "}
      <span className="muted" title={dateTime(s.since)}>
        since {ago(s.since, now)}
      </span>
      {canAct && (
        <button className={`btn small${s.action === "isolate" ? " danger" : ""} ml-8`} onClick={() => onAct(s.chip.id, s.action)} data-testid={`suggestion-act-${s.chip.id}`}>
          {s.action === "isolate" ? "Isolate…" : "Restore…"}
        </button>
      )}
      <div className="small-text">{s.why}</div>
      {s.slices.length > 0 && (
        <div className="small-text muted">
          Holds {s.slices.length === 1 ? "1 slice" : `${s.slices.length} slices`} (they keep running until drained):{" "}
          <span className="mono">{s.slices.map((x) => `${x.namespace}/${x.pod_name}${x.request ? ` (request #${x.request})` : ""}`).join(", ")}</span>
        </div>
      )}
    </li>
  );
}
