// Templates: edit chip types and templates (validated by the API on every
// save), see the diff and the impact, publish with a reason, browse history
// and roll back, follow the restarts.

import { useMemo, useState } from "react";
import { api } from "../api/client";
import type { ChipType, DeviceConfigState, Drift, Page, Template, ValidationIssue, WhatIf } from "../api/types";
import { Badge, ErrorNote, Loading } from "../components/ui";
import { useT } from "../i18n/I18nProvider";
import { useQueryParam } from "../lib/router";
import { useApi, useThrottledEffect } from "../lib/useApi";
import { useClusters, useLiveVersion } from "../state/cluster";
import { useSession } from "../state/session";
import { Editor } from "./templates/Editor";
import { HistoryTab } from "./templates/History";
import { PublishTab } from "./templates/Publish";

type Tab = "edit" | "publish" | "history";

export function TemplatesPage() {
  const t = useT();
  const { cluster, live } = useClusters();
  useLiveVersion(live);
  const { can } = useSession();
  const id = cluster!.id;
  const [tab, setTab] = useQueryParam("tab", "edit");
  const [typeParam, setTypeParam] = useQueryParam("type");
  const [nonce, setNonce] = useState(0);
  const [warnings, setWarnings] = useState<ValidationIssue[] | null>(null);

  const chipTypes = useApi((s) => api.get<Page<ChipType>>(`/api/chip-types/?cluster=${id}&page_size=200`, s), [id, nonce]);
  const templates = useApi((s) => api.get<Page<Template>>(`/api/templates/?cluster=${id}&page_size=1000`, s), [id, nonce]);
  const config = useApi((s) => api.get<DeviceConfigState>(`/api/clusters/${id}/device-config/`, s), [id, nonce]);
  const whatIf = useApi((s) => api.get<WhatIf>(`/api/clusters/${id}/what-if/`, s), [id, nonce]);
  const drift = useApi(
    tab === "publish" ? (s) => api.get<Drift>(`/api/clusters/${id}/drift/`, s) : (s) => api.get<Drift>(`/api/clusters/${id}/drift/?live=false`, s),
    [id, nonce, tab],
  );
  // A ConfigMap change seen by sync (a publish, a hand edit, an adoption) may change everything here.
  useThrottledEffect(() => setNonce((n) => n + 1), live?.ticks.object ?? 0, 3000);

  const types = useMemo(() => [...(chipTypes.data?.results ?? [])].sort((a, b) => a.common_word.localeCompare(b.common_word)), [chipTypes.data]);
  const selected = types.find((c) => c.common_word === typeParam) ?? types[0];
  const selectedTemplates = useMemo(
    () => (templates.data?.results ?? []).filter((tpl) => selected && tpl.chip_type === selected.id).sort((a, b) => a.memory - b.memory || a.name.localeCompare(b.name)),
    [templates.data, selected],
  );
  const pending = !!config.data?.diff_from_base.trim();
  const reload = () => setNonce((n) => n + 1);

  return (
    <>
      <div className="page-head">
        <h1>{t("templates.title")}</h1>
        <span className="sub">
          {t("templates.sub", { version: config.data?.base_version ? `v${config.data.base_version}` : "", cluster: cluster!.name })}
        </span>
        <span className="actions">
          {drift.data && !drift.data.in_sync && <Badge kind="fail">{t("templates.driftBadge")}</Badge>}
          {(config.data?.errors.length ?? 0) > 0 && <Badge kind="fail">{t("templates.errors", { count: config.data!.errors.length })}</Badge>}
          {pending ? (
            <Badge kind="warn">{t("templates.unpublished")}</Badge>
          ) : (
            config.data && <Badge kind="ok">{t("templates.published")}</Badge>
          )}
        </span>
      </div>
      <div className="panel mb-14">
        <div className="tabs" role="tablist">
          {(
            [
              ["edit", t("templates.tab.edit")],
              ["publish", pending ? t("templates.tab.publishPending") : t("templates.tab.publish")],
              ["history", t("templates.tab.history")],
            ] as [Tab, string][]
          ).map(([key, label]) => (
            <button key={key} role="tab" className={tab === key ? "on" : ""} aria-selected={tab === key} onClick={() => setTab(key)} data-testid={`tab-${key}`}>
              {label}
            </button>
          ))}
        </div>
      </div>
      <ErrorNote error={chipTypes.error ?? templates.error} onRetry={reload} />
      {tab === "edit" &&
        (!chipTypes.data || !templates.data ? (
          <Loading />
        ) : types.length === 0 ? (
          <div className="panel">
            <div className="empty">{t("templates.noConfig")}</div>
          </div>
        ) : (
          <div className="grid side">
            <div className="panel">
              <div className="panel-head">
                <h2>{t("templates.chipTypes")}</h2>
              </div>
              <ul className="list-nav">
                {types.map((c) => (
                  <li key={c.id}>
                    <button className={c.id === selected?.id ? "on" : ""} onClick={() => setTypeParam(c.common_word)} data-testid={`chip-type-${c.common_word}`}>
                      <span className="flex-1">
                        {c.common_word}
                        <div className="muted tiny-text fw-400">
                          {t("templates.chipTypeLine", { chipName: c.chip_name, templates: c.templates.length, slots: c.slots_per_chip })}
                        </div>
                      </span>
                    </button>
                  </li>
                ))}
              </ul>
            </div>
            {selected && (
              <Editor
                chipType={selected}
                templates={selectedTemplates}
                whatIf={whatIf.data?.chip_types.find((c) => c.common_word === selected.common_word)}
                canEdit={can("operator")}
                warnings={warnings ?? config.data?.warnings ?? []}
                onSaved={(w) => {
                  setWarnings(w);
                  reload();
                }}
              />
            )}
          </div>
        ))}
      {tab === "publish" && (
        <PublishTab
          clusterId={id}
          config={config.data}
          configError={config.error}
          whatIf={whatIf.data}
          whatIfLoading={whatIf.loading}
          drift={drift.data}
          driftError={drift.error}
          onPublished={reload}
        />
      )}
      {tab === "history" && <HistoryTab clusterId={id} refreshTick={nonce} onRolledBack={reload} />}
    </>
  );
}
