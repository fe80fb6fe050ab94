// The language of the whole app: the provider, the hooks and the menu.

import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { loadMessages } from "./catalog";
import { currentI18n, makeI18n, setCurrentI18n, type I18n, type Translate } from "./intl";
import { initialLocale, LOCALE_NAMES, LOCALES, rememberLocale, type Locale } from "./locale";

interface I18nState extends I18n {
  setLocale: (locale: Locale) => void;
}

// Without a provider (unit tests of a single component) the app speaks English.
const I18nContext = createContext<I18nState>({ ...currentI18n(), setLocale: () => undefined });

export function I18nProvider({ children, locale: forced }: { children: ReactNode; locale?: Locale }) {
  const [i18n, setI18n] = useState<I18n>(currentI18n);
  const [wanted, setWanted] = useState<Locale>(() => forced ?? initialLocale());
  // At start the app waits for its language (no flash of English); a later
  // switch keeps the page (and what is typed in it) until the new one is in.
  const [started, setStarted] = useState(false);

  useEffect(() => {
    let cancelled = false;
    loadMessages(wanted).then((messages) => {
      if (cancelled) return;
      const next = makeI18n(wanted, messages);
      setCurrentI18n(next);
      document.documentElement.lang = wanted;
      setI18n(next);
      setStarted(true);
    });
    return () => {
      cancelled = true;
    };
  }, [wanted]);

  const setLocale = useCallback((locale: Locale) => {
    rememberLocale(locale);
    setWanted(locale);
  }, []);

  const value = useMemo(() => ({ ...i18n, setLocale }), [i18n, setLocale]);
  if (!started && i18n.locale !== wanted) return null;
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

/** The translate function of the UI's current language. */
export function useT(): Translate {
  return useContext(I18nContext).t;
}

/** The current language, its react-intl object (numbers, dates) and how to change it. */
export function useI18n(): I18nState {
  return useContext(I18nContext);
}

/** The language menu of the top bar. */
export function LanguageMenu() {
  const { locale, setLocale, t } = useI18n();
  return (
    <select
      className="language-menu"
      aria-label={t("common.language")}
      value={locale}
      onChange={(e) => setLocale(e.target.value as Locale)}
    >
      {LOCALES.map((l) => (
        <option key={l} value={l} lang={l}>
          {LOCALE_NAMES[l]}
        </option>
      ))}
    </select>
  );
}
