// The structured editor of one chip type and its templates. Every save goes to
// the API, which validates the whole device config: its errors land on the
// field that caused them, its warnings are listed under the picture.

import { useEffect, useMemo, useState } from "react";
import { api, ApiError } from "../../api/client";
import type { ChipType, Template, ValidationIssue, WhatIfChipType, WithWarnings } from "../../api/types";
import { FitPicture } from "../../components/FitPicture";
import { Badge, Banner, Field } from "../../components/ui";
import {
  changedFields,
  draftNullable,
  draftNumber,
  isAllowedName,
  isDirty,
  parseIntField,
  rebase,
  templateNameOptions,
  toValues,
  type Draft,
  type Values,
} from "../../lib/drafts";
import { useT } from "../../i18n/I18nProvider";
import { errorText, mapErrors, type FieldErrors } from "../../lib/errors";
import { mb } from "../../lib/format";

const TYPE_FIELDS = ["chip_name", "memory_allocatable", "memory_capacity", "ai_core", "ai_cpu"] as const;
const TYPE_ERROR_FIELDS = [...TYPE_FIELDS, "common_word", "resource_name", "resource_memory_name", "resource_core_name"];
const TEMPLATE_FIELDS = ["name", "memory", "ai_core", "ai_cpu"] as const;
const NULLABLE = new Set(["ai_core", "ai_cpu"]);
const EMPTY_ERRORS: FieldErrors = { fields: {}, form: [] };
/** The chip type's fields as the device config (HAMi's ConfigMap) names them: identifiers, not translated. */
const CONFIG_NAMES = {
  chip_name: "chipName",
  memory_allocatable: "memoryAllocatable (MB)",
  memory_capacity: "memoryCapacity (MB)",
  ai_core: "aiCore",
  ai_cpu: "aiCPU",
};

interface Props {
  chipType: ChipType;
  templates: Template[];
  whatIf: WhatIfChipType | undefined;
  canEdit: boolean;
  onSaved: (warnings: ValidationIssue[]) => void;
  warnings: ValidationIssue[];
}

function payload(d: Draft, fields: readonly string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of fields) {
    const text = d.value[f] ?? "";
    body[f] = f === "name" || f === "chip_name" ? text.trim() : parseIntField(text, NULLABLE.has(f));
  }
  return body;
}

function errorsOf(e: unknown, fields: readonly string[]): FieldErrors {
  if (e instanceof ApiError) return mapErrors(e.body, fields);
  return { fields: {}, form: [errorText(e)] };
}

export function Editor({ chipType, templates, whatIf, canEdit, onSaved, warnings }: Props) {
  const t = useT();
  const [typeDraft, setTypeDraft] = useState<Draft>(() => rebase(undefined, toValues(chipType, TYPE_FIELDS)));
  const [rows, setRows] = useState<Record<number, Draft>>({});
  const [newRow, setNewRow] = useState<Values | null>(null);
  const [typeErrors, setTypeErrors] = useState<FieldErrors>(EMPTY_ERRORS);
  const [rowErrors, setRowErrors] = useState<Record<string, FieldErrors>>({});
  const [busy, setBusy] = useState<string | null>(null);
  const [confirmDelete, setConfirmDelete] = useState<number | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  // Server data changed (a save, or another user's): keep edits, move bases.
  useEffect(() => {
    setTypeDraft((d) => rebase(d, toValues(chipType, TYPE_FIELDS)));
  }, [chipType]);
  useEffect(() => {
    setRows((old) => {
      const next: Record<number, Draft> = {};
      for (const tpl of templates) next[tpl.id] = rebase(old[tpl.id], toValues(tpl, TEMPLATE_FIELDS));
      return next;
    });
  }, [templates]);
  // Another chip type selected: start clean.
  useEffect(() => {
    setTypeErrors(EMPTY_ERRORS);
    setRowErrors({});
    setNewRow(null);
    setSaved(null);
    setConfirmDelete(null);
  }, [chipType.id]);

  const fitChip = {
    memory_allocatable: draftNumber(typeDraft.value.memory_allocatable),
    memory_capacity: draftNumber(typeDraft.value.memory_capacity),
    ai_core: draftNullable(typeDraft.value.ai_core),
    ai_cpu: draftNullable(typeDraft.value.ai_cpu),
  };
  const fitTemplates = useMemo(() => {
    const list = templates.map((tpl) => {
      const v = rows[tpl.id]?.value ?? toValues(tpl, TEMPLATE_FIELDS);
      return { name: v.name, memory: draftNumber(v.memory), ai_core: draftNullable(v.ai_core), ai_cpu: draftNullable(v.ai_cpu) };
    });
    if (newRow && newRow.memory.trim()) {
      list.push({ name: newRow.name || t("templates.editor.newName"), memory: draftNumber(newRow.memory), ai_core: draftNullable(newRow.ai_core), ai_cpu: draftNullable(newRow.ai_cpu) });
    }
    return list; // server order (by saved memory): colours stay put while typing
  }, [templates, rows, newRow, t]);

  const done = (message: string, response: WithWarnings<unknown>) => {
    setSaved(message);
    onSaved(response.warnings ?? []);
  };

  const saveType = async () => {
    setBusy("type");
    setSaved(null);
    try {
      const body = payload(typeDraft, changedFields(typeDraft));
      const answer = await api.patch<WithWarnings<ChipType>>(`/api/chip-types/${chipType.id}/`, body);
      setTypeErrors(EMPTY_ERRORS);
      setTypeDraft(rebase(undefined, toValues(answer, TYPE_FIELDS)));
      done(t("templates.editor.savedType", { name: chipType.common_word }), answer);
    } catch (e) {
      setTypeErrors(errorsOf(e, TYPE_ERROR_FIELDS));
    } finally {
      setBusy(null);
    }
  };

  const saveRow = async (tpl: Template) => {
    const d = rows[tpl.id];
    if (!d) return;
    setBusy(`row-${tpl.id}`);
    setSaved(null);
    try {
      const answer = await api.patch<WithWarnings<Template>>(`/api/templates/${tpl.id}/`, payload(d, changedFields(d)));
      setRowErrors((e) => ({ ...e, [tpl.id]: EMPTY_ERRORS }));
      setRows((r) => ({ ...r, [tpl.id]: rebase(undefined, toValues(answer, TEMPLATE_FIELDS)) }));
      done(t("templates.editor.savedTemplate", { name: answer.name }), answer);
    } catch (e) {
      setRowErrors((errs) => ({ ...errs, [tpl.id]: errorsOf(e, TEMPLATE_FIELDS) }));
    } finally {
      setBusy(null);
    }
  };

  const deleteRow = async (tpl: Template) => {
    setBusy(`row-${tpl.id}`);
    setSaved(null);
    try {
      await api.del(`/api/templates/${tpl.id}/`);
      setConfirmDelete(null);
      done(t("templates.editor.deletedTemplate", { name: tpl.name }), {});
    } catch (e) {
      setRowErrors((errs) => ({ ...errs, [tpl.id]: errorsOf(e, TEMPLATE_FIELDS) }));
    } finally {
      setBusy(null);
    }
  };

  const addRow = async () => {
    if (!newRow) return;
    setBusy("new");
    setSaved(null);
    try {
      const body = { chip_type: chipType.id, ...payload({ base: {}, value: newRow }, TEMPLATE_FIELDS) };
      const answer = await api.post<WithWarnings<Template>>("/api/templates/", body);
      setRowErrors((e) => ({ ...e, new: EMPTY_ERRORS }));
      setNewRow(null);
      done(t("templates.editor.addedTemplate", { name: answer.name }), answer);
    } catch (e) {
      setRowErrors((errs) => ({ ...errs, new: errorsOf(e, TEMPLATE_FIELDS) }));
    } finally {
      setBusy(null);
    }
  };

  const setTypeField = (f: string, v: string) => setTypeDraft((d) => ({ ...d, value: { ...d.value, [f]: v } }));
  const setRowField = (id: number, f: string, v: string) => setRows((r) => ({ ...r, [id]: { ...r[id], value: { ...r[id].value, [f]: v } } }));
  // Names ascend-docker-runtime and this chip family accept (from the API), for the name fields.
  const allowed = chipType.allowed_template_names ?? [];
  const draftNames = templates.map((tpl) => rows[tpl.id]?.value.name ?? tpl.name);
  if (newRow) draftNames.push(newRow.name);
  const nameOptions = (own: string) => templateNameOptions(allowed, draftNames, own);
  const typeWarnings = warnings.filter((w) => !w.chip_type || w.chip_type === chipType.common_word);
  const te = typeErrors.fields;

  return (
    <div data-testid="template-editor">
      <div className="panel">
        <div className="panel-head">
          <h2>{chipType.common_word}</h2>
          <span className="muted mono">{chipType.resource_name}</span>
          {whatIf && whatIf.chip_type_change !== "unchanged" && <Badge kind="info">{t("templates.editor.sinceLastPublish", { change: t(`templates.change.${whatIf.chip_type_change}`) })}</Badge>}
          <span className="right">
            {canEdit && isDirty(typeDraft) && (
              <>
                <button className="btn small" onClick={() => setTypeDraft(rebase(undefined, typeDraft.base))}>
                  {t("templates.editor.revert")}
                </button>
                <button className="btn small primary" disabled={busy === "type"} onClick={() => void saveType()} data-testid="save-chip-type">
                  {t("templates.editor.saveType")}
                </button>
              </>
            )}
          </span>
        </div>
        <div className="panel-body">
          {typeErrors.form.length > 0 && <Banner kind="error">{typeErrors.form.join(" ")}</Banner>}
          <div className="form-grid">
            <Field label={CONFIG_NAMES.chip_name} errors={te.chip_name} hint={t("templates.editor.chipNameHint")}>
              <input className={`input${te.chip_name ? " invalid" : ""}`} value={typeDraft.value.chip_name} readOnly={!canEdit} onChange={(e) => setTypeField("chip_name", e.target.value)} name="chip_name" />
            </Field>
            <Field label={CONFIG_NAMES.memory_allocatable} errors={te.memory_allocatable} hint={mb(draftNumber(typeDraft.value.memory_allocatable))}>
              <input className={`input${te.memory_allocatable ? " invalid" : ""}`} inputMode="numeric" value={typeDraft.value.memory_allocatable} readOnly={!canEdit} onChange={(e) => setTypeField("memory_allocatable", e.target.value)} name="memory_allocatable" />
            </Field>
            <Field label={CONFIG_NAMES.memory_capacity} errors={te.memory_capacity} hint={mb(draftNumber(typeDraft.value.memory_capacity))}>
              <input className={`input${te.memory_capacity ? " invalid" : ""}`} inputMode="numeric" value={typeDraft.value.memory_capacity} readOnly={!canEdit} onChange={(e) => setTypeField("memory_capacity", e.target.value)} name="memory_capacity" />
            </Field>
            <Field label={CONFIG_NAMES.ai_core} errors={te.ai_core}>
              <input className={`input${te.ai_core ? " invalid" : ""}`} inputMode="numeric" value={typeDraft.value.ai_core} readOnly={!canEdit} onChange={(e) => setTypeField("ai_core", e.target.value)} name="ai_core" />
            </Field>
            <Field label={CONFIG_NAMES.ai_cpu} errors={te.ai_cpu}>
              <input className={`input${te.ai_cpu ? " invalid" : ""}`} inputMode="numeric" value={typeDraft.value.ai_cpu} readOnly={!canEdit} onChange={(e) => setTypeField("ai_cpu", e.target.value)} name="ai_cpu" />
            </Field>
          </div>
        </div>
      </div>

      <div className="panel">
        <div className="panel-head">
          <h2>{t("templates.title")}</h2>
          <span className="right">
            {canEdit && !newRow && (
              <button className="btn small" onClick={() => setNewRow({ name: "", memory: "", ai_core: "", ai_cpu: "" })} data-testid="add-template">
                {t("templates.editor.add")}
              </button>
            )}
          </span>
        </div>
        {saved && (
          <div className="panel-body pb-0">
            <Banner kind="ok" testId="saved">
              {saved} {t("templates.editor.notLive")}
            </Banner>
          </div>
        )}
        <table className="data" data-testid="templates-table">
          <thead>
            <tr>
              <th className="w-30pct">{t("templates.editor.name")}</th>
              <th>{t("templates.editor.memory")}</th>
              <th>AICore</th>
              <th>AICPU</th>
              <th className="num">{t("templates.editor.fitsPerChip")}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {templates.map((tpl) => {
              const d = rows[tpl.id] ?? rebase(undefined, toValues(tpl, TEMPLATE_FIELDS));
              const errs = rowErrors[tpl.id] ?? EMPTY_ERRORS;
              const wt = whatIf?.templates.find((w) => w.name === tpl.name);
              const dirty = isDirty(d);
              return (
                <TemplateRow
                  key={tpl.id}
                  testId={`template-row-${tpl.name}`}
                  values={d.value}
                  errors={errs}
                  canEdit={canEdit}
                  nameOptions={nameOptions(d.value.name ?? "")}
                  allowedNames={allowed}
                  commonWord={chipType.common_word}
                  onChange={(f, v) => setRowField(tpl.id, f, v)}
                  badge={wt && wt.template_change !== "unchanged" ? t(`templates.change.${wt.template_change}`) : undefined}
                  fitAlone={wt?.fit_alone}
                  actions={
                    canEdit && (
                      <>
                        {dirty && (
                          <>
                            <button className="btn small" onClick={() => setRows((r) => ({ ...r, [tpl.id]: rebase(undefined, d.base) }))}>
                              {t("templates.editor.revert")}
                            </button>
                            <button className="btn small primary" disabled={busy === `row-${tpl.id}`} onClick={() => void saveRow(tpl)} data-testid="save-template">
                              {t("templates.editor.save")}
                            </button>
                          </>
                        )}
                        {!dirty &&
                          (confirmDelete === tpl.id ? (
                            <>
                              <button className="btn small danger solid" disabled={busy === `row-${tpl.id}`} onClick={() => void deleteRow(tpl)}>
                                {t("templates.editor.deleteNamed", { name: tpl.name })}
                              </button>
                              <button className="btn small" onClick={() => setConfirmDelete(null)}>
                                {t("templates.editor.keep")}
                              </button>
                            </>
                          ) : (
                            <button className="btn small subtle-danger" onClick={() => setConfirmDelete(tpl.id)} aria-label={t("templates.editor.deleteLabel", { name: tpl.name })}>
                              {t("templates.editor.delete")}
                            </button>
                          ))}
                      </>
                    )
                  }
                />
              );
            })}
            {newRow && (
              <TemplateRow
                testId="template-row-new"
                values={newRow}
                errors={rowErrors.new ?? EMPTY_ERRORS}
                canEdit
                nameOptions={nameOptions(newRow.name)}
                allowedNames={allowed}
                commonWord={chipType.common_word}
                onChange={(f, v) => setNewRow((r) => (r ? { ...r, [f]: v } : r))}
                badge={t("templates.change.new")}
                actions={
                  <>
                    <button className="btn small" onClick={() => setNewRow(null)}>
                      {t("templates.cancel")}
                    </button>
                    <button className="btn small primary" disabled={busy === "new"} onClick={() => void addRow()} data-testid="create-template">
                      {t("templates.editor.addButton")}
                    </button>
                  </>
                }
              />
            )}
            {templates.length === 0 && !newRow && (
              <tr>
                <td colSpan={6} className="empty">
                  {t("templates.editor.noTemplate")}
                </td>
              </tr>
            )}
          </tbody>
        </table>
        {!canEdit && <div className="panel-body muted">{t("templates.editor.readOnly")}</div>}
      </div>

      <div className="panel">
        <div className="panel-head">
          <h2>{t("templates.editor.fitTitle")}</h2>
          <span className="right">{t("templates.editor.fitHint")}</span>
        </div>
        <div className="panel-body">
          <FitPicture chip={fitChip} templates={fitTemplates} />
          {whatIf && whatIf.slots_per_chip_before !== null && whatIf.slots_per_chip_before !== whatIf.slots_per_chip && (
            <Banner kind="warn">
              {t("templates.editor.slotsChange", { before: whatIf.slots_per_chip_before, after: whatIf.slots_per_chip })}
            </Banner>
          )}
          {typeWarnings.length > 0 && (
            <ul className="warnings-list" data-testid="warnings">
              {typeWarnings.map((w, i) => (
                <li key={i}>
                  <Badge kind="warn">{w.severity === "error" || w.severity === "warning" ? t(`templates.severity.${w.severity}`) : w.severity}</Badge> {w.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      </div>
    </div>
  );
}

function TemplateRow({
  values,
  errors,
  canEdit,
  onChange,
  actions,
  badge,
  fitAlone,
  testId,
  nameOptions,
  allowedNames,
  commonWord,
}: {
  values: Values;
  errors: FieldErrors;
  canEdit: boolean;
  /** names to suggest for this template (allowed and not used by another) */
  nameOptions: string[];
  allowedNames: readonly string[];
  commonWord: string;
  onChange: (field: string, value: string) => void;
  actions: React.ReactNode;
  badge?: string;
  fitAlone?: number;
  testId: string;
}) {
  const t = useT();
  const f = errors.fields;
  const suggestions = canEdit ? nameOptions : [];
  const listId = `${testId}-names`;
  // Before the API is asked: a name the chip family does not accept (the API's error wins once saved).
  const nameHint = !f.name?.length && !isAllowedName(values.name ?? "", allowedNames);
  const input = (field: string, props: React.InputHTMLAttributes<HTMLInputElement> = {}) => (
    <input
      className={`input full-width${f[field] ? " invalid" : ""}`}
      value={values[field] ?? ""}
      readOnly={!canEdit}
      onChange={(e) => onChange(field, e.target.value)}
      name={field}
      aria-invalid={!!f[field]}
      {...props}
    />
  );
  return (
    <>
      <tr data-testid={testId}>
        <td>
          <div className="hstack gap-6">
            {input("name", {
              list: suggestions.length ? listId : undefined,
              placeholder: suggestions.length ? t("templates.editor.namePlaceholder", { name: suggestions[0] }) : undefined,
              autoComplete: "off",
            })}
            {badge && <Badge kind="info">{badge}</Badge>}
          </div>
          {suggestions.length > 0 && (
            <datalist id={listId}>
              {suggestions.map((s) => (
                <option key={s} value={s} />
              ))}
            </datalist>
          )}
          <FieldErrorsView messages={f.name} />
          {nameHint && (
            <div className="muted tiny-text" data-testid="name-hint">
              {t("templates.editor.nameHint", { chipType: commonWord, names: allowedNames.join(", ") })}
            </div>
          )}
        </td>
        <td>
          {input("memory", { inputMode: "numeric" })}
          <FieldErrorsView messages={f.memory} testId="error-memory" />
        </td>
        <td>
          {input("ai_core", { inputMode: "numeric" })}
          <FieldErrorsView messages={f.ai_core} />
        </td>
        <td>
          {input("ai_cpu", { inputMode: "numeric" })}
          <FieldErrorsView messages={f.ai_cpu} />
        </td>
        <td className="num">{fitAlone !== undefined ? `× ${fitAlone}` : "–"}</td>
        <td className="nowrap align-right">
          {actions}
        </td>
      </tr>
      {errors.form.length > 0 && (
        <tr>
          <td colSpan={6}>
            <div className="field-error" role="alert">
              {errors.form.join(" ")}
            </div>
          </td>
        </tr>
      )}
    </>
  );
}

function FieldErrorsView({ messages, testId }: { messages?: string[]; testId?: string }) {
  if (!messages?.length) return null;
  return (
    <>
      {messages.map((m, i) => (
        <div key={i} className="field-error" role="alert" data-testid={testId}>
          {m}
        </div>
      ))}
    </>
  );
}
