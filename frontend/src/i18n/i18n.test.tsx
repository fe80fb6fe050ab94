import { act, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ago, dateTime, duration, int } from "../lib/format";
import { loadMessages } from "./catalog";
import { I18nProvider, LanguageMenu, useT } from "./I18nProvider";
import { currentI18n, makeI18n, setCurrentI18n } from "./intl";
import { initialLocale, matchLocale } from "./locale";

afterEach(() => {
  localStorage.clear();
  setCurrentI18n(makeI18n("en", currentI18n().intl.messages as Record<string, string>));
});

describe("the UI's language", () => {
  it("matches a browser's tags to the languages it has", () => {
    expect(matchLocale("zh")).toBe("zh-CN");
    expect(matchLocale("zh-Hans-CN")).toBe("zh-CN");
    expect(matchLocale("zh-TW")).toBeNull();
    expect(matchLocale("en-GB")).toBe("en");
    expect(matchLocale("fr-FR")).toBeNull();
  });

  it("takes the remembered choice first, then the browser's languages, then English", () => {
    expect(initialLocale(["fr", "zh-CN", "en"])).toBe("zh-CN");
    expect(initialLocale(["de"])).toBe("en");
    localStorage.setItem("vnpu.locale", "en");
    expect(initialLocale(["zh-CN"])).toBe("en");
  });

  it("formats numbers, durations and dates in the chosen language", async () => {
    setCurrentI18n(makeI18n("zh-CN", await loadMessages("zh-CN")));
    expect(duration(3 * 3600 + 120)).toBe("3小时2分钟");
    expect(ago(new Date(Date.now() - 300_000).toISOString())).toBe("5分钟前");
    expect(dateTime("2026-12-02T11:55:07Z")).toMatch(/^2026\/12\/02 \d\d:55:07$/);
    expect(int(1234567)).toBe("1,234,567");
    setCurrentI18n(makeI18n("en", await loadMessages("en")));
    expect(duration(3 * 3600 + 120)).toBe("3h 2m");
    expect(ago(new Date(Date.now() - 300_000).toISOString())).toBe("5m ago");
  });

  it("switches the whole page from the menu and remembers it", async () => {
    function Probe() {
      const t = useT();
      return <p data-testid="probe">{t("app.signOut")}</p>;
    }
    render(
      <I18nProvider locale="en">
        <LanguageMenu />
        <Probe />
      </I18nProvider>,
    );
    expect((await screen.findByTestId("probe")).textContent).toBe("Sign out");
    const menu = screen.getByRole("combobox") as HTMLSelectElement;
    await act(async () => {
      menu.value = "zh-CN";
      menu.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await waitFor(() => expect(screen.getByTestId("probe").textContent).toBe("退出登录"));
    expect(localStorage.getItem("vnpu.locale")).toBe("zh-CN");
    expect(document.documentElement.lang).toBe("zh-CN");
    expect(currentI18n().locale).toBe("zh-CN");
  });

  it("has every English message in Chinese, with the same ICU arguments", async () => {
    const en = await loadMessages("en");
    const zh = await loadMessages("zh-CN");
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
    const plural = makeI18n("zh-CN", { ...zh, "test.n": "{n, plural, other {# 个芯片}}" });
    expect(plural.t("test.n", { n: 3 })).toBe("3 个芯片");
  });
});
