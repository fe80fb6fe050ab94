// PriorityClasses: the cluster's classes as sync mirrors them
// (`/api/priority-classes/`), highest value first, and which of them a request
// may name as its `priority`. Read-only: they are Kubernetes objects.

import { api, qs } from "../api/client";
import type { Page, PriorityClass } from "../api/types";
import { Badge, ErrorNote, Loading } from "../components/ui";
import { useRichT } from "../i18n/rich";
import { useT } from "../i18n/I18nProvider";
import { int } from "../lib/format";
import { byValue } from "../lib/quotas";
import { useApi, useLiveReload } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";

function Preemption({ policy }: { policy: string }) {
  const t = useT();
  if (policy === "Never") {
    return (
      <Badge kind="warn" title={t("priorityClasses.neverTitle")}>
        {t("priorityClasses.never")}
      </Badge>
    );
  }
  return <span className="muted">{policy || "PreemptLowerPriority"}</span>;
}

/** What a request without `priority` gets here, in words. */
function DefaultNote({ classes }: { classes: PriorityClass[] }) {
  const rich = useRichT();
  const fallback = classes.find((c) => c.global_default);
  return (
    <div className="panel-body" data-testid="priority-default">
      {rich("priorityClasses.intro")} {fallback ? rich("priorityClasses.defaultIs", { name: fallback.name }) : rich("priorityClasses.noDefault")}
    </div>
  );
}

export function PriorityClassesPage() {
  const t = useT();
  const { cluster, live } = useClusters();
  useLiveVersion(live);
  const id = cluster!.id;
  const loaded = useApi((signal) => api.get<Page<PriorityClass>>(`/api/priority-classes/${qs({ cluster: id, page_size: 1000 })}`, signal), [id]);
  const { reload } = loaded;
  useLiveReload(reload, live?.ticks.object ?? 0, 30_000);
  const classes = byValue(loaded.data?.results ?? []);

  return (
    <>
      <div className="page-head">
        <h1>{t("priorityClasses.title")}</h1>
        <span className="sub">{loaded.data ? t("priorityClasses.count", { count: classes.length }) : ""}</span>
      </div>
      <div className="panel">
        <ErrorNote error={loaded.error} onRetry={reload} />
        {!loaded.data && loaded.loading ? (
          <Loading />
        ) : classes.length === 0 ? (
          <div className="empty">{t("priorityClasses.none")}</div>
        ) : (
          <>
            <DefaultNote classes={classes} />
            <div className="table-wrap">
              <table className="data" data-testid="priority-classes">
                <thead>
                  <tr>
                    <th>{t("priorityClasses.col.name")}</th>
                    <th className="num">{t("priorityClasses.col.value")}</th>
                    <th>{t("priorityClasses.col.preemption")}</th>
                    <th>{t("priorityClasses.col.globalDefault")}</th>
                    <th>{t("priorityClasses.col.description")}</th>
                    <th>{t("priorityClasses.col.inRequest")}</th>
                  </tr>
                </thead>
                <tbody>
                  {classes.map((c) => (
                    <tr key={c.id} data-testid={`priority-${c.name}`}>
                      <td className="mono nowrap">{c.name}</td>
                      <td className="num">{int(c.value)}</td>
                      <td>
                        <Preemption policy={c.preemption_policy} />
                      </td>
                      <td>{c.global_default ? <Badge kind="info">{t("priorityClasses.globalDefault")}</Badge> : ""}</td>
                      <td>{c.description}</td>
                      <td className="nowrap">
                        <code>"priority": "{c.name}"</code>
                        {c.name.startsWith("system-") && <div className="muted">{t("priorityClasses.system")}</div>}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </div>
    </>
  );
}
