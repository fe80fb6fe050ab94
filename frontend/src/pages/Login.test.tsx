import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, screen, waitFor } from "@testing-library/react";
import type { AuthConfig } from "../api/types";
import { ENGLISH, loadMessages } from "../i18n/catalog";
import { I18nProvider } from "../i18n/I18nProvider";
import { LoginPage } from "./Login";
import { LOGIN_ERROR_CODES, loginErrorId } from "./loginErrors";
import { stubFetch } from "./testing";

const oidcOn: AuthConfig = {
  local_login_enabled: true,
  oidc_enabled: true,
  oidc_provider_name: "Example Corp",
  oidc_login_url: "/api/auth/oidc/login/",
};

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
  window.history.replaceState(null, "", "/");
});

describe("LoginPage", () => {
  it("offers the identity provider beside the password form", async () => {
    stubFetch((url) => (url === "/api/auth/config/" ? { body: oidcOn } : undefined));
    render(<LoginPage onLogin={() => {}} />);
    const button = await screen.findByTestId("oidc-sign-in");
    expect(button.textContent).toBe("Sign in with Example Corp");
    expect(button.getAttribute("href")).toBe("/api/auth/oidc/login/");
    expect(document.querySelector("input[name=password]")).not.toBeNull();
  });

  it("shows no button without OIDC, and no form with local passwords off", async () => {
    stubFetch(() => ({
      body: { ...oidcOn, oidc_enabled: false, oidc_login_url: null, oidc_provider_name: null },
    }));
    const { unmount } = render(<LoginPage onLogin={() => {}} />);
    await waitFor(() => expect(document.querySelector("input[name=password]")).not.toBeNull());
    expect(screen.queryByTestId("oidc-sign-in")).toBeNull();
    unmount();
    stubFetch(() => ({ body: { ...oidcOn, local_login_enabled: false } }));
    render(<LoginPage onLogin={() => {}} />);
    await screen.findByTestId("oidc-sign-in");
    expect(document.querySelector("input[name=password]")).toBeNull();
  });

  it("explains a failed sign-in by its code and takes the code out of the address", async () => {
    window.history.replaceState(null, "", "/?login_error=oidc_no_role&x=1");
    stubFetch(() => ({ body: { ...oidcOn, local_login_enabled: false } }));
    render(<LoginPage onLogin={() => {}} />);
    const error = await screen.findByTestId("login-error");
    expect(error.textContent).toBe(ENGLISH["auth.loginError.oidc_no_role"]);
    expect(error.textContent).toContain("none of your groups");
    expect(window.location.search).toBe("?x=1");
  });

  it("says it in Chinese in Chinese", async () => {
    localStorage.setItem("vnpu.locale", "zh-CN");
    window.history.replaceState(null, "", "/?login_error=oidc_state_mismatch");
    stubFetch(() => ({ body: oidcOn }));
    render(
      <I18nProvider>
        <LoginPage onLogin={() => {}} />
      </I18nProvider>,
    );
    expect((await screen.findByTestId("oidc-sign-in")).textContent).toBe("通过 Example Corp 登录");
    const zh = await loadMessages("zh-CN");
    expect(screen.getByTestId("login-error").textContent).toBe(zh["auth.loginError.oidc_state_mismatch"]);
  });

  it("has words for every code, and generic ones for a code it does not know", () => {
    for (const code of LOGIN_ERROR_CODES) expect(ENGLISH[loginErrorId(code)]).toBeTruthy();
    expect(loginErrorId("oidc_something_new")).toBe("auth.loginError.unknown");
    expect(ENGLISH["auth.loginError.unknown"]).toMatch(/failed/);
  });
});
