// The message catalogs: one JSON file per namespace and language,
// locales/<locale>/<namespace>.json, flat keys. A message's id is
// "<namespace>.<key>" (e.g. "chips.title"). English is bundled with the app
// (it is also the fallback); another language is fetched when chosen.
// Messages are ICU MessageFormat: "{count, plural, one {# chip} other {# chips}}".

import type { Locale } from "./locale";

export type Messages = Record<string, string>;
type Catalog = Record<string, string>;

const english = import.meta.glob<Catalog>("./locales/en/*.json", { eager: true, import: "default" });
const others = import.meta.glob<Catalog>("./locales/*/*.json", { import: "default" });

function namespaceOf(path: string): string {
  return path.replace(/^.*\/([^/]+)\.json$/, "$1");
}

function flatten(files: [string, Catalog][]): Messages {
  const messages: Messages = {};
  for (const [path, catalog] of files) {
    const ns = namespaceOf(path);
    for (const [key, text] of Object.entries(catalog)) messages[`${ns}.${key}`] = text;
  }
  return messages;
}

export const ENGLISH: Messages = flatten(Object.entries(english));

const loaded = new Map<Locale, Messages>([["en", ENGLISH]]);

/** The messages of a locale (fetched once; English at once). */
export async function loadMessages(locale: Locale): Promise<Messages> {
  const cached = loaded.get(locale);
  if (cached) return cached;
  const prefix = `./locales/${locale}/`;
  const files = await Promise.all(
    Object.entries(others)
      .filter(([path]) => path.startsWith(prefix))
      .map(async ([path, load]) => [path, await load()] as [string, Catalog]),
  );
  // A key missing in this language shows in English rather than as its id
  // (the catalog check in the test command keeps that from shipping).
  const messages = { ...ENGLISH, ...flatten(files) };
  loaded.set(locale, messages);
  return messages;
}
