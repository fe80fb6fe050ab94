// PriorityClasses: the cluster's classes as sync mirrors them
// (`/api/priority-classes/`), highest value first, and which of them a request
// may name as its `priority`. Read-only: they are Kubernetes objects.

import { api, qs } from "../api/client";
import type { Page, PriorityClass } from "../api/types";
import { Badge, ErrorNote, Loading } from "../components/ui";
import { int } from "../lib/format";
import { byValue } from "../lib/quotas";
import { useApi, useLiveReload } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";

function Preemption({ policy }: { policy: string }) {
  if (policy === "Never") {
    return (
      <Badge kind="warn" title="preemptionPolicy: Never — its requests wait for room instead of evicting lower priorities">
        never preempts
      </Badge>
    );
  }
  return <span className="muted">{policy || "PreemptLowerPriority"}</span>;
}

/** What a request without `priority` gets here, in words. */
function DefaultNote({ classes }: { classes: PriorityClass[] }) {
  const fallback = classes.find((c) => c.global_default);
  return (
    <div className="panel-body" data-testid="priority-default">
      A request names one of these classes as <code>priority</code>; a higher value is scheduled first and may preempt lower ones (see Preemptions).{" "}
      {fallback ? (
        <>
          Without <code>priority</code> it gets the global default, <b>{fallback.name}</b>.
        </>
      ) : (
        <>
          This cluster has no global default, so a request must name one (otherwise 400 on <code>priority</code>).
        </>
      )}
    </div>
  );
}

export function PriorityClassesPage() {
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
        <h1>PriorityClasses</h1>
        <span className="sub">{loaded.data ? `${classes.length} classes` : ""}</span>
      </div>
      <div className="panel">
        <ErrorNote error={loaded.error} onRetry={reload} />
        {!loaded.data && loaded.loading ? (
          <Loading />
        ) : classes.length === 0 ? (
          <div className="empty">No PriorityClass in this cluster: requests cannot be submitted until one exists.</div>
        ) : (
          <>
            <DefaultNote classes={classes} />
            <div className="table-wrap">
              <table className="data" data-testid="priority-classes">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th className="num">Value</th>
                    <th>Preemption</th>
                    <th>Global default</th>
                    <th>Description</th>
                    <th>In a request</th>
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
                      <td>{c.global_default ? <Badge kind="info">global default</Badge> : ""}</td>
                      <td>{c.description}</td>
                      <td className="nowrap">
                        <code>"priority": "{c.name}"</code>
                        {c.name.startsWith("system-") && <div className="muted">meant for cluster components</div>}
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
