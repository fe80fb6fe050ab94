// Messages with markup (react-intl rich text): <b>…</b> bold, <mono>…</mono>
// a name in monospace, <link>…</link> a link given by the caller. The words
// stay in the catalogs, the elements in the code.

import type { ReactNode } from "react";
import { useI18n } from "../../i18n/I18nProvider";

type Chunks = ReactNode[];
export type Rich = (id: string, values?: Record<string, ReactNode | ((chunks: Chunks) => ReactNode)>) => ReactNode;

export function useRich(): Rich {
  const { intl } = useI18n();
  return (id, values) =>
    intl.formatMessage(
      { id },
      {
        b: (chunks: Chunks) => <b>{chunks}</b>,
        mono: (chunks: Chunks) => <span className="mono">{chunks}</span>,
        ...values,
      },
    );
}
