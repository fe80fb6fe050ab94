#!/usr/bin/env node
// The catalog check of the test command (docs/frontend.md, "Languages"):
//
//   node scripts/i18n-check.mjs                 the whole app
//   node scripts/i18n-check.mjs src/pages/X.tsx only these files' texts (catalogs still whole)
//
// Fails (exit 1, one line per problem, file:line) when
//  - a language lacks a namespace file or a key another language has, a message
//    is empty or not valid ICU MessageFormat, or its {arguments} differ between
//    languages;
//  - the code names a message id ("ns.key" in a string) that English lacks;
//  - a key of the catalogs is used nowhere (a template string `ns.prefix.${x}`
//    counts as using every key under that prefix);
//  - a text a person reads is written in the code instead of the catalogs:
//    JSX text, a string in JSX, the title / placeholder / aria-label / alt /
//    label attributes, or a label-like property (label, title, help, ...).
// Names, units and identifiers (ALLOWED_WORDS, text inside <code>/<kbd>/<pre>)
// are not texts to translate. A line with "i18n-ignore" (or the line after it)
// is skipped: say why beside it.

import { parse } from "@babel/parser";
import { parse as parseIcu, TYPE } from "@formatjs/icu-messageformat-parser";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

// I18N_CHECK_ROOT: another frontend tree (the check's own tests use a small one).
const ROOT = process.env.I18N_CHECK_ROOT ?? new URL("..", import.meta.url).pathname;
const SRC = join(ROOT, "src");
const LOCALES_DIR = join(SRC, "i18n", "locales");

/** Words that stay as they are in every language: product names, units, kinds, acronyms. */
const ALLOWED_WORDS = new Set(
  (
    "vNPU vNPUs NPU NPUs HAMi Volcano Ascend Kubernetes AI Core CPU AICore AICPU GiB MiB MB TiB KiB GB " +
    "UUID UUIDs API REST URL YAML JSON CSV PromQL ConfigMap DaemonSet PriorityClass PriorityClasses Pod Pods " +
    "kubectl helm Helm ID IDs OK CI vdie HBM ms s h d m min Prometheus Alertmanager OpenID OIDC SSO " +
    "WebSocket Grafana Docker Celery Redis PostgreSQL SQLite vNPU Portal"
  ).split(/\s+/),
);
const TEXT_ATTRIBUTES = new Set(["title", "placeholder", "aria-label", "alt", "label"]);
const TEXT_PROPERTIES = new Set([
  "label", "title", "placeholder", "help", "hint", "description", "text", "message", "heading", "empty", "confirm", "tooltip",
]);
const RAW_ELEMENTS = new Set(["code", "kbd", "pre", "samp"]);

const problems = [];
const problem = (file, line, text) => problems.push(`${relative(ROOT, file)}:${line}: ${text}`);

function walkFiles(dir, test) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walkFiles(path, test));
    else if (test(path)) out.push(path);
  }
  return out.sort();
}

// ---- the catalogs ----------------------------------------------------------

function icuArguments(message, where) {
  const names = new Set();
  const visit = (elements) => {
    for (const el of elements) {
      if ("value" in el && el.type !== TYPE.literal && el.type !== TYPE.pound) names.add(el.value);
      if (el.options) for (const option of Object.values(el.options)) visit(option.value);
      if (el.children) visit(el.children);
    }
  };
  try {
    visit(parseIcu(message));
  } catch (error) {
    problem(where, 1, `not valid ICU MessageFormat: ${JSON.stringify(message)} (${error.message})`);
  }
  return [...names].sort().join(",");
}

const locales = readdirSync(LOCALES_DIR).filter((n) => statSync(join(LOCALES_DIR, n)).isDirectory()).sort();
const catalogs = {}; // locale -> id -> message
for (const locale of locales) {
  catalogs[locale] = {};
  for (const file of walkFiles(join(LOCALES_DIR, locale), (p) => p.endsWith(".json"))) {
    const ns = file.slice(file.lastIndexOf("/") + 1, -".json".length);
    let data;
    try {
      data = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      problem(file, 1, `not JSON: ${error.message}`);
      continue;
    }
    for (const [key, message] of Object.entries(data)) {
      if (typeof message !== "string" || !message.trim()) problem(file, 1, `"${key}" is empty or not a string`);
      else catalogs[locale][`${ns}.${key}`] = message;
    }
  }
}
const english = catalogs.en ?? {};
const namespaces = new Set(Object.keys(english).map((id) => id.split(".")[0]));
for (const locale of locales) {
  const where = join(LOCALES_DIR, locale);
  for (const id of Object.keys(english)) {
    if (!(id in catalogs[locale])) problem(where, 1, `${locale} lacks "${id}"`);
    else if (icuArguments(english[id], where) !== icuArguments(catalogs[locale][id], where))
      problem(where, 1, `"${id}": the {arguments} differ from English`);
  }
  for (const id of Object.keys(catalogs[locale])) if (!(id in english)) problem(where, 1, `"${id}" is not in English`);
}

// ---- the code --------------------------------------------------------------

const only = process.argv.slice(2).map((p) => join(process.cwd(), p));
// Generated tables (error codes, the live contract) describe the API for developers; nothing shows them.
const GENERATED = /src\/api\/errorCodes\.ts$|src\/live\/contract\.ts$/;
const sources = walkFiles(SRC, (p) => /\.(ts|tsx)$/.test(p) && !/\.test\.tsx?$|\.d\.ts$|testSetup\.ts$/.test(p) && !GENERATED.test(p));
const used = new Set();
const usedPrefixes = new Set();

function readsAsText(value) {
  const words = value.match(/[A-Za-z][A-Za-z'’-]+/g) ?? [];
  return words.some((w) => !ALLOWED_WORDS.has(w));
}

const CODE_ATTRIBUTES = new Set(["className", "data-testid", "key", "href", "to", "id", "name", "type", "role", "htmlFor", "lang", "kind", "icon", "testId"]);

/** A string of two or more words somewhere else in the code (a message built in a function, a ternary in JSX...). */
function looksLikeProse(node, ancestors) {
  const value = node.type === "TemplateElement" ? node.value.cooked ?? "" : node.value;
  if (!/[A-Za-z]{2,}[ ,:;]+[A-Za-z]{2,}/.test(value) || !readsAsText(value)) return false;
  const parent = ancestors[ancestors.length - 1];
  const holder = node.type === "TemplateElement" ? ancestors[ancestors.length - 2] : parent;
  if (!parent) return false;
  if (["ImportDeclaration", "ExportNamedDeclaration", "ExportAllDeclaration", "TSLiteralType", "TSExternalModuleReference", "ImportExpression"].includes(parent.type)) return false;
  if (parent.type === "ObjectProperty" && parent.key === node) return false;
  if (parent.type === "JSXAttribute") return false; // the attribute rule above decides
  if (ancestors.some((a) => a.type === "JSXAttribute" && CODE_ATTRIBUTES.has(a.name.name))) return false;
  if (ancestors.some((a) => a.type === "TSTypeAnnotation" || a.type === "TSTypeAliasDeclaration" || a.type === "TSInterfaceDeclaration")) return false;
  const call = holder?.type === "CallExpression" ? holder : null;
  if (call) {
    const callee = call.callee;
    const name = callee.type === "Identifier" ? callee.name : callee.type === "MemberExpression" ? callee.object.name : "";
    if (["console", "t", "require", "querySelector", "matchMedia"].includes(name)) return false;
  }
  return true;
}

function noteId(value, file, line) {
  const ns = value.split(".")[0];
  if (!/^[a-zA-Z][\w-]*\.[\w.-]+$/.test(value) || !namespaces.has(ns)) return false;
  used.add(value);
  if (!(value in english)) problem(file, line, `message id "${value}" is not in the English catalog`);
  return true;
}

for (const file of sources) {
  const code = readFileSync(file, "utf8");
  const lines = code.split("\n");
  const ignored = (line) => /i18n-ignore/.test(lines[line - 1] ?? "") || /i18n-ignore/.test(lines[line - 2] ?? "");
  let ast;
  try {
    ast = parse(code, { sourceType: "module", plugins: ["typescript", ...(file.endsWith(".tsx") ? ["jsx"] : [])] });
  } catch (error) {
    problem(file, 1, `cannot parse: ${error.message}`);
    continue;
  }
  const checkText = !only.length || only.includes(file);
  const inRaw = (ancestors) => ancestors.some((a) => a.type === "JSXElement" && RAW_ELEMENTS.has(a.openingElement.name.name));
  const stack = [];
  const walk = (node) => {
    if (!node || typeof node.type !== "string") return;
    const line = node.loc?.start.line ?? 1;
    if (node.type === "StringLiteral") noteId(node.value, file, line);
    if (node.type === "TemplateLiteral" && node.quasis.length > 1) {
      const head = node.quasis[0].value.cooked ?? "";
      if (/^[a-zA-Z][\w-]*\.[\w.-]*$/.test(head) && namespaces.has(head.split(".")[0])) usedPrefixes.add(head);
    }
    if (checkText && !ignored(line)) {
      const parent = stack[stack.length - 1];
      if (node.type === "JSXText" && readsAsText(node.value) && !inRaw(stack))
        problem(file, line, `JSX text ${JSON.stringify(node.value.trim())}: put it in the catalogs`);
      if (node.type === "JSXAttribute" && TEXT_ATTRIBUTES.has(node.name.name) && node.value?.type === "StringLiteral" && readsAsText(node.value.value))
        problem(file, line, `${node.name.name}="${node.value.value}": put it in the catalogs`);
      if (parent?.type === "JSXExpressionContainer" && stack[stack.length - 2]?.type === "JSXElement" && !inRaw(stack)) {
        if (node.type === "StringLiteral" && readsAsText(node.value) && !noteId(node.value, file, line))
          problem(file, line, `string ${JSON.stringify(node.value)} in JSX: put it in the catalogs`);
        if (node.type === "TemplateLiteral" && node.quasis.some((q) => readsAsText(q.value.cooked ?? "")))
          problem(file, line, "template string in JSX: put its text in the catalogs");
      }
      if ((node.type === "StringLiteral" || node.type === "TemplateElement") && looksLikeProse(node, stack))
        problem(file, line, `text ${JSON.stringify(node.value.cooked ?? node.value)}: put it in the catalogs`);
      if (node.type === "ObjectProperty" && !node.computed && TEXT_PROPERTIES.has(node.key.name ?? node.key.value) &&
          node.value.type === "StringLiteral" && readsAsText(node.value.value) && !/^[\w-]+\.[\w.-]+$/.test(node.value.value))
        problem(file, line, `${node.key.name ?? node.key.value}: "${node.value.value}": put it in the catalogs`);
    }
    stack.push(node);
    for (const key of Object.keys(node)) {
      if (key === "loc" || key === "extra" || key === "leadingComments" || key === "trailingComments") continue;
      const child = node[key];
      if (Array.isArray(child)) for (const c of child) walk(c);
      else if (child && typeof child.type === "string") walk(child);
    }
    stack.pop();
  };
  walk(ast.program);
}

if (!only.length) {
  for (const id of Object.keys(english)) {
    if (used.has(id) || [...usedPrefixes].some((p) => id.startsWith(p))) continue;
    problem(join(LOCALES_DIR, "en"), 1, `"${id}" is used nowhere in src/ (remove it, or name it in the code)`);
  }
}

if (problems.length) {
  console.error(problems.join("\n"));
  console.error(`\ni18n check: ${problems.length} problem(s) (docs/frontend.md, section "Languages", says how to fix each)`);
  process.exit(1);
}
console.log(`i18n check: ${locales.join(", ")}; ${Object.keys(english).length} messages; ${sources.length} source files clean`);
