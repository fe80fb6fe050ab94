// The catalog check (scripts/i18n-check.mjs) on a small frontend tree of its
// own: it passes a clean one and names each kind of problem in a broken one.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = join(__dirname, "..", "..", "scripts", "i18n-check.mjs");
let root = "";

function tree(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), "i18n-check-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function check(dir: string): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, [SCRIPT], { env: { ...process.env, I18N_CHECK_ROOT: dir }, encoding: "utf8" });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

const CLEAN = {
  "src/i18n/locales/en/page.json": JSON.stringify({ title: "Chips", count: "{n, plural, one {# chip} other {# chips}}" }),
  "src/i18n/locales/zh-CN/page.json": JSON.stringify({ title: "芯片", count: "{n, plural, other {# 个芯片}}" }),
  "src/Page.tsx": 'export const Page = ({ t }: { t: (id: string, v?: object) => string }) => <h1 title={t("page.title")}>{t("page.count", { n: 2 })} <code>kubectl get pods</code></h1>;\n',
};

describe("the catalog check", () => {
  it("passes a tree whose texts are all in both catalogs", () => {
    const { status, out } = check(tree(CLEAN));
    expect(out).toContain("2 messages");
    expect(status).toBe(0);
  });

  it("names a missing key, an argument mismatch, an unknown id, an unused key and a text in the code", () => {
    const { status, out } = check(
      tree({
        ...CLEAN,
        "src/i18n/locales/en/page.json": JSON.stringify({ title: "Chips", count: "{n} chips", spare: "Never used" }),
        "src/i18n/locales/zh-CN/page.json": JSON.stringify({ title: "芯片", count: "{m} 个芯片" }),
        "src/Page.tsx":
          'export const Page = ({ t }: { t: (id: string) => string }) => <h1 title="Chip list">{t("page.title")}{t("page.count")}{t("page.gone")} Nodes and chips</h1>;\n',
      }),
    );
    expect(status).toBe(1);
    expect(out).toContain('zh-CN lacks "page.spare"');
    expect(out).toContain('"page.count": the {arguments} differ from English');
    expect(out).toContain('message id "page.gone" is not in the English catalog');
    expect(out).toContain('"page.spare" is used nowhere');
    expect(out).toContain('title="Chip list"');
    expect(out).toContain('JSX text "Nodes and chips"');
  });

  it("lets a line marked i18n-ignore keep its words", () => {
    const { status } = check(
      tree({
        ...CLEAN,
        "src/Query.ts": '// i18n-ignore: a PromQL query, not for a person\nexport const q = "sum by (node) of the usage";\n',
      }),
    );
    expect(status).toBe(0);
  });
});
