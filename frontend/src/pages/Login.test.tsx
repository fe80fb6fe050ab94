import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, screen, waitFor } from "@testing-library/react";
import type { AuthConfig } from "../api/types";
import { LoginPage } from "./Login";
import { LOGIN_ERRORS, loginErrorMessage } from "./loginErrors";
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
    expect(error.textContent).toBe(LOGIN_ERRORS.oidc_no_role);
    expect(error.textContent).not.toContain("oidc_no_role");
    expect(window.location.search).toBe("?x=1");
  });

  it("has a message for a code it does not know", () => {
    expect(loginErrorMessage("oidc_something_new")).toMatch(/failed/);
    expect(loginErrorMessage("oidc_state_mismatch")).toMatch(/sign in again/);
  });
});
