"""The portal in Chinese, in a real browser (issue 34).

A browser whose language is Chinese gets the whole UI in Chinese: the login
page, then every main page, with no English left in what a person reads
other than names (of clusters, nodes, queues, templates, users...), units and
identifiers. The language menu switches back to English and the choice
outlives a reload.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pytest
from playwright.sync_api import expect

from harness.stack import Stack
from tests.e2e.conftest import ADMIN

pytestmark = pytest.mark.browser

PAGES = [
    "/",
    "/chips",
    "/slices",
    "/templates",
    "/node-config",
    "/requests",
    "/requests/new",
    "/preemptions",
    "/drains",
    "/queues",
    "/priority-classes",
    "/usage",
    "/cost",
    "/cost/monthly",
    "/health",
    "/alerts",
    "/audit",
    "/tokens",
]

# Kept in every language (docs/glossary.md): products, kinds, units, acronyms.
KEPT = {
    "vNPU",
    "vNPUs",
    "NPU",
    "NPUs",
    "HAMi",
    "Volcano",
    "Ascend",
    "Kubernetes",
    "AI",
    "Core",
    "CPU",
    "AICore",
    "AICPU",
    "GiB",
    "MiB",
    "MB",
    "TiB",
    "KiB",
    "GB",
    "UUID",
    "API",
    "REST",
    "URL",
    "YAML",
    "JSON",
    "CSV",
    "PromQL",
    "ConfigMap",
    "DaemonSet",
    "PriorityClass",
    "PriorityClasses",
    "Pod",
    "Pods",
    "kubectl",
    "helm",
    "ID",
    "CI",
    "vdie",
    "HBM",
    "ms",
    "min",
    "Prometheus",
    "Alertmanager",
    "OpenID",
    "OIDC",
    "WebSocket",
    "Portal",
    "Grafana",
    "manage",
    "py",
    "Queue",
    "Queues",
    "Deployment",
    "Secret",
    "ServiceAccount",
    "Node",
    "Ready",
    "Running",
    "Pending",
    "Open",
    "Closed",
    "Bearer",
    "Authorization",
    "default",  # the Kubernetes namespace
    # Volcano's and the device config's own names, YAML values, the component's name
    "deviceshare",
    "predicates",
    "actions",
    "preempt",
    "true",
    "false",
    "wrapper",
    "list",
    "plugin",
    "Go",
    "map",
    "vnpus",  # the device config's key
    "template",  # a slicing mode of the device plugin (template, hami-core)
}
# A kubectl command in a sentence is for copying, not reading: up to the
# sentence's end (a Chinese or English full stop or semicolon).
COMMAND = re.compile(r"kubectl [^；。\n]*|\b\w+: (\[\]|\{\})")  # or a YAML snippet
# Fields of the API whose values are names or identifiers, shown as they are.
NAME_FIELDS = re.compile(
    r"(^|_)(name|names|username|namespace|node|cluster|queue|template|uuid|pod|"
    r"image|common_word|chip_type|priority_class|priority|role|kind|state|phase|"
    r"scheduler|vendor|model|mode|owner|code|key|label|labels|namespaces|actor|"
    r"pod_security)$"
)
# Fields whose values are texts of the cluster's objects or typed by people
# (descriptions, reasons): a text on the page that is one of them is data.
DATA_FIELDS = re.compile(r"(^|_)(description|reason|comment|object_repr)$")
WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019]+")


def _words(values: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for value in values:
        found.update(WORD.findall(value))
    return found


def _values(body: Any, fields: re.Pattern[str], key: str = "") -> Iterable[str]:
    if isinstance(body, dict):
        for k, v in body.items():
            yield from _values(v, fields, k)
    elif isinstance(body, list):
        for item in body:
            yield from _values(item, fields, key)
    elif isinstance(body, str) and fields.search(key):
        yield body


def _names_in_the_cluster(portal: Stack) -> tuple[set[str], set[str]]:
    """Every word of a name the API gives, and every text of the cluster's
    objects or of people: these stay as they are on every page."""
    api = portal.api()
    api.login(ADMIN)
    names: set[str] = set()
    data: set[str] = set()
    for path in (
        "/api/clusters/",
        "/api/nodes/?page_size=1000",
        "/api/chips/?page_size=1000",
        "/api/slices/?page_size=1000",
        "/api/queues/?page_size=1000",
        "/api/templates/?page_size=1000",
        "/api/requests/?page_size=1000",
        "/api/priority-classes/?page_size=1000",
        "/api/audit-events/?page_size=1000",
        "/api/me/",
    ):
        status, body = api.call("GET", path)
        assert status == 200, (path, status, body)
        names |= _words(_values(body, NAME_FIELDS))
        data |= {text.strip() for text in _values(body, DATA_FIELDS) if text.strip()}
    return names, data


# The text a person reads: text nodes outside code and the UI's monospace
# identifiers (.mono: names, UUIDs, resources), identifiers marked raw,
# scripts and styles, plus the titles and placeholders the pointer reveals.
READ_TEXT = """() => {
  const out = [];
  const skip = (el) => el.closest('code, pre, kbd, samp, script, style, option, .mono, [data-i18n-raw]');
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement && !skip(node.parentElement) && node.textContent.trim()) out.push(node.textContent.trim());
  }
  for (const el of document.querySelectorAll('[title], [placeholder], [aria-label]')) {
    if (skip(el)) continue;
    for (const a of ['title', 'placeholder', 'aria-label']) if (el.getAttribute(a)) out.push(el.getAttribute(a));
  }
  return out;
}"""


# A run of ASCII that is an identifier, not a word: it has a digit or one of
# ._/:=#@$ in it, a hyphen (kube-system, npu-exporter), an inner capital
# (memoryAllocatable, PreemptLowerPriority) or is in capitals (PROMETHEUS_URL, UTC).
TOKEN = re.compile(r"[A-Za-z0-9_.:/=#@$'\u2019-]+")
IDENTIFIER = re.compile(r"[0-9_.:/=#@$-]|[a-z][A-Z]|^[A-Z]{2,}$")


def _strays(text: str, allowed: set[str]) -> list[str]:
    strays = []
    text = COMMAND.sub(" ", text)
    for found in TOKEN.finditer(text):
        raw = found.group()
        # "deviceconfig." before Chinese punctuation is a prefix, not a sentence's end
        follows = text[found.end() : found.end() + 1]
        token = (
            raw
            if raw.endswith(".") and follows and not follows.isspace()
            else raw.strip(".:'\u2019-")
        )
        if not token or IDENTIFIER.search(token):
            continue
        strays += [w for w in WORD.findall(token) if w not in allowed and w not in KEPT]
    return strays


def _english_left(page: Any, known: tuple[set[str], set[str]]) -> list[str]:
    names, data = known
    texts: list[str] = page.evaluate(READ_TEXT)
    left = []
    for text in texts:
        if text in data:
            continue
        strays = _strays(text, names)
        if strays:
            left.append(f"{text!r} ({', '.join(strays)})")
    return left


@pytest.fixture
def chinese_page(browser: Any, portal: Stack) -> Any:
    context = browser.new_context(
        viewport={"width": 1440, "height": 900}, locale="zh-CN"
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def test_a_chinese_browser_gets_every_main_page_in_chinese(
    chinese_page: Any, portal: Stack, shot: Any
) -> None:
    page = chinese_page
    allowed = _names_in_the_cluster(portal)
    page.goto(portal.url + "/")
    page.wait_for_selector("input[name=username]")
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    assert not _english_left(page, allowed), _english_left(page, allowed)
    page.fill("input[name=username]", ADMIN[0])
    page.fill("input[name=password]", ADMIN[1])
    page.click("button[type=submit]")
    page.wait_for_selector("[data-testid=connection][data-state=live]")

    leftovers: dict[str, list[str]] = {}
    for path in PAGES:
        page.evaluate(
            "path => { history.pushState({}, '', path); dispatchEvent(new PopStateEvent('popstate')); }",
            path,
        )
        # The page is in when its loading placeholder has gone and it shows Chinese.
        page.wait_for_function(
            "() => !document.querySelector('main .spinner') && /[\\u4e00-\\u9fff]/.test(document.querySelector('main').innerText)"
        )
        page.wait_for_timeout(300)  # a late panel (a second fetch) has drawn
        left = _english_left(page, allowed)
        if left:
            leftovers[path] = left
    shot(page, "chinese-tokens")
    assert not leftovers, "English left on pages:\n" + "\n".join(
        f"{path}: {left}" for path, left in leftovers.items()
    )


def test_the_language_menu_switches_and_is_remembered(page: Any, portal: Stack) -> None:
    page.goto(portal.url + "/")
    page.fill("input[name=username]", ADMIN[0])
    page.fill("input[name=password]", ADMIN[1])
    page.click("button[type=submit]")
    page.wait_for_selector("[data-testid=connection][data-state=live]")
    sign_out = page.locator("header.topbar button", has_text="Sign out")
    expect(sign_out).to_be_visible()

    page.select_option("select.language-menu", "zh-CN")
    expect(page.locator("header.topbar button", has_text="退出登录")).to_be_visible()
    expect(page.locator("nav.nav")).to_contain_text("节点与芯片")
    page.reload()
    page.wait_for_selector("[data-testid=connection][data-state=live]")
    expect(page.locator("header.topbar button", has_text="退出登录")).to_be_visible()

    # The API answers in the UI's language; its codes stay the same.
    answer = page.evaluate(
        """async () => {
      const r = await fetch('/api/requests/', {method: 'POST', headers: {
        'Content-Type': 'application/json', 'Accept-Language': document.documentElement.lang,
        'X-CSRFToken': (document.cookie.match(/csrftoken=([^;]+)/) || [])[1] || ''}, body: '{}'});
      return {status: r.status, body: await r.json()};
    }"""
    )
    assert answer["status"] == 400, answer
    assert answer["body"]["code"] == "invalid", answer
    assert re.search("[\u4e00-\u9fff]", answer["body"]["message"]), answer
    page.select_option("select.language-menu", "en")
    expect(sign_out).to_be_visible()
