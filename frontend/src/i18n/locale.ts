// The UI's language: English or Simplified Chinese. The choice is remembered
// in the browser; without one, the browser's own language decides.

export const LOCALES = ["en", "zh-CN"] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = "en";

/** What the language menu shows for each locale: always in its own language. */
export const LOCALE_NAMES: Record<Locale, string> = { en: "English", "zh-CN": "简体中文" };

const STORAGE_KEY = "vnpu.locale";

function storage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null; // a browser that refuses storage (privacy mode) still gets a UI
  }
}

/** The locale of a BCP 47 tag, if the UI has it: "zh", "zh-Hans-CN", "zh-SG" -> zh-CN; "en-GB" -> en. */
export function matchLocale(tag: string | null | undefined): Locale | null {
  if (!tag) return null;
  const lower = tag.toLowerCase();
  // Traditional Chinese readers are better served by English than by the wrong script.
  if (lower.startsWith("zh")) return /^zh-(hant|tw|hk|mo)/.test(lower) ? null : "zh-CN";
  if (lower.startsWith("en")) return "en";
  return null;
}

/** The remembered choice, else the first of the browser's languages the UI has, else English. */
export function initialLocale(languages: readonly string[] = browserLanguages()): Locale {
  const remembered = matchLocale(storage()?.getItem(STORAGE_KEY));
  if (remembered) return remembered;
  for (const tag of languages) {
    const found = matchLocale(tag);
    if (found) return found;
  }
  return DEFAULT_LOCALE;
}

export function rememberLocale(locale: Locale): void {
  storage()?.setItem(STORAGE_KEY, locale);
}

function browserLanguages(): readonly string[] {
  if (typeof navigator === "undefined") return [];
  return navigator.languages?.length ? navigator.languages : [navigator.language];
}
