// Turning the API's error body into messages on the fields of a form.
//
// Every error of the portal has one shape:
//   {"code": "invalid", "message": "...", "errors": {"memory": ["..."]}, "detail": ...}
// `errors` keys are field names (`memory`), nested paths from DRF
// (`templates[0].memory`) or device-config paths from the validator
// (`vnpus[1].templates[0].memory`, `vnpus[0].memoryAllocatable`).

export interface ApiErrorBody {
  code?: string;
  message?: string;
  errors?: Record<string, string[] | string>;
  detail?: unknown;
}

export interface FieldErrors {
  /** messages per form field */
  fields: Record<string, string[]>;
  /** messages that belong to no field of this form (shown at the top of it) */
  form: string[];
}

/** camelCase keys of device-config.yaml -> the API's snake_case field names. */
const ALIASES: Record<string, string> = {
  memoryAllocatable: "memory_allocatable",
  memoryCapacity: "memory_capacity",
  aiCore: "ai_core",
  aiCPU: "ai_cpu",
  aiCpu: "ai_cpu",
  chipName: "chip_name",
  commonWord: "common_word",
  resourceName: "resource_name",
  resourceMemoryName: "resource_memory_name",
  resourceCoreName: "resource_core_name",
};

/** Path segments of a key: `vnpus[1].templates[0].memory` -> ["vnpus", 1, "templates", 0, "memory"]. */
export function parsePath(key: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of key.split(".")) {
    const re = /([^[\]]+)|\[(\d+)\]/g;
    let m: RegExpExecArray | null;
    while ((m = re.exec(part)) !== null) {
      if (m[1] !== undefined) out.push(m[1]);
      else out.push(Number(m[2]));
    }
  }
  return out;
}

/** The form field a key names: its last name segment, with YAML names mapped to the API's. */
export function fieldOf(key: string): string {
  const names = parsePath(key).filter((p): p is string => typeof p === "string");
  const last = names[names.length - 1] ?? key;
  return ALIASES[last] ?? last;
}

function asList(value: string[] | string | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

/**
 * Map an error body onto `fields` (the names the form shows). A key whose field
 * is not in the form, `non_field_errors`, or a body without `errors`, ends up in
 * `form`, so no message is ever lost.
 */
export function mapErrors(body: ApiErrorBody | null | undefined, fields: readonly string[]): FieldErrors {
  const result: FieldErrors = { fields: {}, form: [] };
  if (!body) return result;
  const known = new Set(fields);
  const entries = Object.entries(body.errors ?? {});
  for (const [key, value] of entries) {
    const field = fieldOf(key);
    const messages = asList(value);
    if (known.has(field)) {
      (result.fields[field] ??= []).push(...messages);
    } else {
      const label = key === "non_field_errors" ? "" : `${key}: `;
      result.form.push(...messages.map((m) => label + m));
    }
  }
  if (entries.length === 0 && body.message) result.form.push(body.message);
  return result;
}

/**
 * A failed form submission, split for display: messages for the form's own
 * fields, and the rest as one text for the form (null when the fields say it
 * all). An error without an API body (network, bug) is all form text.
 */
export function submitFailure(error: unknown, fields: readonly string[]): { fields: Record<string, string[]>; form: string | null } {
  const body = error && typeof error === "object" && "body" in error ? (error as { body: ApiErrorBody | null }).body : null;
  if (!body) return { fields: {}, form: errorText(error) };
  const mapped = mapErrors(body, fields);
  const form = mapped.form.length ? mapped.form.join(" ") : Object.keys(mapped.fields).length ? null : errorText(error);
  return { fields: mapped.fields, form };
}

/** Stable text for an error of any kind (network failures, API errors, bugs). */
export function errorText(error: unknown): string {
  if (error && typeof error === "object" && "message" in error) {
    return String((error as { message: unknown }).message);
  }
  return String(error);
}
