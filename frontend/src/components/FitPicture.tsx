// How the templates fit one chip: the slots HAMi gives a chip, and per
// template how many slices fit alone, drawn to scale on the chip's memory.

import { useT } from "../i18n/I18nProvider";
import { chipFit, type FitChip, type FitTemplate } from "../lib/fit";
import { mb } from "../lib/format";

export function FitPicture({ chip, templates }: { chip: FitChip; templates: FitTemplate[] }) {
  const t = useT();
  const fit = chipFit(chip, templates);
  const alloc = chip.memory_allocatable > 0 ? chip.memory_allocatable : 0;
  const capacity = Math.max(alloc, chip.memory_capacity ?? 0);
  const scale = capacity > 0 ? 100 / capacity : 0;
  return (
    <div data-testid="fit-picture">
      <div className="hstack gap-12 mb-12 flex-wrap">
        <span>
          <b data-testid="fit-slots">{fit.slots}</b> {t("fit.slotsPerChip", { count: fit.slots })}
        </span>
        <span className="muted">{t("fit.slotsRule", { alloc: mb(alloc), smallest: mb(fit.smallestMemory) })}</span>
        <div className="slots" aria-hidden>
          {Array.from({ length: Math.min(fit.slots, 64) }, (_, i) => (
            <span key={i} />
          ))}
        </div>
      </div>
      <div className="fit">
        {fit.templates.map((f, i) => (
          <FitRow key={`${f.name}-${i}`} i={i} t={f} scale={scale} reserved={fit.reserved} chipCore={chip.ai_core ?? null} chipCpu={chip.ai_cpu ?? null} />
        ))}
      </div>
      {fit.reserved > 0 && (
        <div className="muted mt-8 small-text">
          {t("fit.reserved", { reserved: mb(fit.reserved), capacity: mb(capacity) })}
        </div>
      )}
    </div>
  );
}

function FitRow({
  i,
  t,
  scale,
  reserved,
  chipCore,
  chipCpu,
}: {
  i: number;
  t: ReturnType<typeof chipFit>["templates"][number];
  scale: number;
  reserved: number;
  chipCore: number | null;
  chipCpu: number | null;
}) {
  const tr = useT();
  const segments = Math.min(t.fit, 64);
  return (
    <>
      <div className="ellipsis">
        <b>{t.name || tr("fit.unnamed")}</b> <span className="muted">{mb(t.memory)}</span>
        {t.smallest && (
          <span className="badge info ml-6" title={tr("fit.smallestTitle")}>
            {tr("fit.smallest")}
          </span>
        )}
      </div>
      <div className="track" title={t.invalid ?? tr("fit.trackTitle", { fit: t.fit, memory: mb(t.memory), left: mb(t.leftover) })}>
        {t.invalid ? (
          <div className="rest invalid">
            {t.invalid}
          </div>
        ) : (
          <>
            {Array.from({ length: segments }, (_, k) => (
              <div key={k} className={`seg t${i % 6}`} style={{ width: `${t.memory * scale}%` }}>
                {t.memory * scale > 6 ? k + 1 : ""}
              </div>
            ))}
            <div className="rest" style={{ width: `${t.leftover * scale}%` }}>
              {t.leftover * scale > 9 ? mb(t.leftover) : ""}
            </div>
            {reserved > 0 && <div className="reserved push-right" style={{ width: `${reserved * scale}%` }} />}
          </>
        )}
      </div>
      <div className="count" title={t.byMemory > t.fit ? tr("fit.capped", { byMemory: t.byMemory }) : undefined}>
        {t.invalid ? "–" : `× ${t.fit}`}
        {(t.overcommitCore || t.overcommitCpu) && (
          <div
            className="badge warn"
            title={tr("fit.overcommitTitle", {
              count: t.fit,
              cores: t.coresUsed ?? "?",
              chipCores: chipCore ?? "?",
              cpus: t.cpusUsed ?? "?",
              chipCpus: chipCpu ?? "?",
            })}
          >
            {tr("fit.overcommit")}
          </div>
        )}
      </div>
    </>
  );
}
