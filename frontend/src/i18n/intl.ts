// The current language for code outside React (formatting helpers, the API
// client's Accept-Language) and the translate function every component uses.

import { createIntl, createIntlCache, type IntlShape } from "react-intl";
import { ENGLISH, type Messages } from "./catalog";
import { DEFAULT_LOCALE, type Locale } from "./locale";

const cache = createIntlCache();

export type Values = Record<string, string | number | boolean | Date | null | undefined>;
/** Translate a message id with ICU values: t("chips.count", { count: 3 }). */
export type Translate = (id: string, values?: Values) => string;

export interface I18n {
  locale: Locale;
  intl: IntlShape;
  t: Translate;
}

function onError(error: { code?: string; message: string }): void {
  // A missing id is a defect the catalog check catches; say it loudly in dev and tests.
  if (import.meta.env.MODE !== "production") console.error(`[i18n] ${error.message}`);
}

export function makeI18n(locale: Locale, messages: Messages): I18n {
  const intl = createIntl({ locale, defaultLocale: DEFAULT_LOCALE, messages, onError }, cache);
  const t: Translate = (id, values) => intl.formatMessage({ id }, values as Record<string, string>);
  return { locale, intl, t };
}

let current: I18n = makeI18n(DEFAULT_LOCALE, ENGLISH);

/** The language the UI shows now (outside React: formatters, the API client). */
export function currentI18n(): I18n {
  return current;
}

export function setCurrentI18n(i18n: I18n): void {
  current = i18n;
}

/** Shorthand for code outside components: translate in the current language. */
export const t: Translate = (id, values) => current.t(id, values);
