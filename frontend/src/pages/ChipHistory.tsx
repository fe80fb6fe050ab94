// The history of one chip, from the API (GET /api/chips/<id>/history/): slices
// placed on it and released from it, newest first, a page at a time. Sync
// records it, so it reaches back before the page opened (not before the portal
// first looked at the cluster).

import { useState } from "react";
import { api, qs } from "../api/client";
import type { ChipEvent, Page } from "../api/types";
import { EventTable, whenColumn, type EventColumn } from "../components/EventTable";
import { Badge, ErrorNote, Pager } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import type { Translate } from "../i18n/intl";
import { mb } from "../lib/format";
import { useApi } from "../lib/useApi";

export const HISTORY_PAGE_SIZE = 20;

export function chipHistoryUrl(chipId: number, page: number, pageSize: number = HISTORY_PAGE_SIZE): string {
  return `/api/chips/${chipId}/history/${qs({ page: page > 1 ? page : undefined, page_size: pageSize })}`;
}

function chipEventColumns(now: number, t: Translate): EventColumn<ChipEvent>[] {
  return [
    whenColumn((e) => e.at, { now }),
    {
      header: t("chips.history.event"),
      cell: (e) => (e.kind === "placed" ? <Badge kind="ok">{t("chips.history.placed")}</Badge> : <Badge>{t("chips.history.released")}</Badge>),
    },
    {
      header: "Pod",
      cell: (e) => (
        <>
          <div className="mono">{e.pod_name}</div>
          <div className="muted tiny-text">
            {e.namespace}
            {e.priority ? ` · ${t("chips.history.priority", { priority: e.priority })}` : ""}
          </div>
        </>
      ),
    },
    { header: t("chips.col.template"), cell: (e) => e.template || <span className="muted">{t("chips.wholeCard")}</span> },
    { header: t("chips.metric.memory"), num: true, cell: (e) => mb(e.memory) },
  ];
}

/**
 * `refresh`: a value that changes when the chip changed (its live row object),
 * so that a slice placed or released while the drawer is open shows up.
 */
export function ChipHistory({ chipId, refresh, now }: { chipId: number; refresh?: unknown; now: number }) {
  const t = useT();
  // The drawer keys this by chip, so another chip starts again on page 1.
  const [page, setPage] = useState(1);
  const history = useApi(
    (signal) => api.get<Page<ChipEvent>>(chipHistoryUrl(chipId, page), signal),
    [chipId, page, refresh],
  );
  const data = history.data;

  return (
    <>
      <ErrorNote error={history.error} onRetry={history.reload} />
      {!data ? (
        history.loading && <div className="muted">{t("chips.history.loading")}</div>
      ) : data.results.length === 0 && page === 1 ? (
        <div className="empty" data-testid="chip-history-empty">
          {t("chips.history.empty")}
        </div>
      ) : (
        <>
          <EventTable rows={data.results} rowKey={(e) => e.id} columns={chipEventColumns(now, t)} testId="chip-history" rowTestId={() => "chip-history-row"} />
          {data.count > HISTORY_PAGE_SIZE && (
            <Pager page={page} count={data.count} pageSize={HISTORY_PAGE_SIZE} onPage={setPage} />
          )}
        </>
      )}
    </>
  );
}
