// How templates fit one chip: the numbers behind the templates editor's picture.
//
// HAMi's rules (docs/scheduler-behaviour.md, "The wire formats"): a chip has
//   slots = memoryAllocatable // (smallest template memory)
// and a template fits `memoryAllocatable // memory` times by memory, never more
// than the slots. AICore and AICPU are not counted by HAMi: when the slices
// that fit need more cores than the chip has, that is an over-commit (a warning).
// A template's problem is worded in the current language (catalog "fit").

import { t as translate } from "../i18n/intl";

export interface FitTemplate {
  name: string;
  memory: number;
  ai_core?: number | null;
  ai_cpu?: number | null;
}

export interface FitChip {
  memory_allocatable: number;
  memory_capacity?: number | null;
  ai_core?: number | null;
  ai_cpu?: number | null;
}

export interface TemplateFit {
  name: string;
  memory: number;
  /** how many fit alone on one chip (by memory, capped by slots) */
  fit: number;
  /** how many fit by memory only */
  byMemory: number;
  /** free MB left on the chip when `fit` of them are placed */
  leftover: number;
  /** AICore / AICPU needed by `fit` slices */
  coresUsed: number | null;
  cpusUsed: number | null;
  /** more cores than the chip has when `fit` slices run */
  overcommitCore: boolean;
  overcommitCpu: boolean;
  /** the template that sets the slot count */
  smallest: boolean;
  /** why the template cannot be placed at all (in the UI's language), or null */
  invalid: string | null;
}

export interface ChipFit {
  slots: number;
  smallestMemory: number | null;
  /** memoryCapacity - memoryAllocatable (reserved, never given to slices) */
  reserved: number;
  templates: TemplateFit[];
}

function positive(n: number | null | undefined): n is number {
  return typeof n === "number" && Number.isFinite(n) && n > 0;
}

/** Slots of a chip: memoryAllocatable // smallest template memory (0 without valid templates). */
export function slotsPerChip(memoryAllocatable: number, templates: readonly FitTemplate[]): number {
  const sizes = templates.map((t) => t.memory).filter(positive);
  if (!positive(memoryAllocatable) || sizes.length === 0) return 0;
  return Math.floor(memoryAllocatable / Math.min(...sizes));
}

export function chipFit(chip: FitChip, templates: readonly FitTemplate[]): ChipFit {
  const alloc = chip.memory_allocatable;
  const slots = slotsPerChip(alloc, templates);
  const sizes = templates.map((t) => t.memory).filter(positive);
  const smallestMemory = sizes.length ? Math.min(...sizes) : null;
  const reserved =
    positive(chip.memory_capacity) && positive(alloc) ? Math.max(0, chip.memory_capacity - alloc) : 0;
  const fits = templates.map((t): TemplateFit => {
    let invalid: string | null = null;
    if (!positive(t.memory)) invalid = translate("fit.invalid.memory");
    else if (!positive(alloc)) invalid = translate("fit.invalid.allocatable");
    else if (t.memory > alloc) invalid = translate("fit.invalid.tooBig", { alloc });
    const byMemory = invalid ? 0 : Math.floor(alloc / t.memory);
    const fit = Math.min(byMemory, slots);
    const coresUsed = typeof t.ai_core === "number" ? t.ai_core * fit : null;
    const cpusUsed = typeof t.ai_cpu === "number" ? t.ai_cpu * fit : null;
    return {
      name: t.name,
      memory: t.memory,
      fit,
      byMemory,
      leftover: invalid ? 0 : alloc - fit * t.memory,
      coresUsed,
      cpusUsed,
      overcommitCore: coresUsed !== null && typeof chip.ai_core === "number" && coresUsed > chip.ai_core,
      overcommitCpu: cpusUsed !== null && typeof chip.ai_cpu === "number" && cpusUsed > chip.ai_cpu,
      smallest: !invalid && t.memory === smallestMemory,
      invalid,
    };
  });
  return { slots, smallestMemory, reserved, templates: fits };
}
