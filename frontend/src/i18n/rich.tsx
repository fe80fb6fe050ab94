// Messages with markup (react-intl rich text): the words stay in one message,
// in the order the language wants, and the elements stay in the code.
// <b>…</b> bold, <code>…</code> code, <mono>…</mono> a name in monospace;
// a caller adds its own tags (a <link>…</link>) as values.

import type { ReactNode } from "react";
import { useI18n } from "./I18nProvider";

type Chunks = ReactNode[];
export type RichValues = Record<string, ReactNode | Date | ((chunks: Chunks) => ReactNode)>;
export type RichTranslate = (id: string, values?: RichValues) => ReactNode;

const TAGS = {
  b: (chunks: Chunks) => <b>{chunks}</b>,
  code: (chunks: Chunks) => <code>{chunks}</code>,
  mono: (chunks: Chunks) => <span className="mono">{chunks}</span>,
};

/** Like useT, for a message with markup in it. */
export function useRichT(): RichTranslate {
  const { intl } = useI18n();
  // react-intl types tag functions per call site; these are its rich-text values.
  const format = intl.formatMessage as (descriptor: { id: string }, values: RichValues) => ReactNode;
  return (id, values) => format({ id }, { ...TAGS, ...values });
}
