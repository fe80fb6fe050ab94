// Why a sign-in through the identity provider failed: the portal sends the
// browser back to the login page with ?login_error=<code>
// (apps/accounts/oidc_client.py, OidcErrorCode). Each code's words are the
// "auth" catalog's "loginError.<code>" (a backend test checks that every
// code has them).

export const LOGIN_ERROR_CODES = [
  "oidc_not_configured",
  "oidc_provider_unreachable",
  "oidc_issuer_mismatch",
  "oidc_state_mismatch",
  "oidc_nonce_mismatch",
  "oidc_code_rejected",
  "oidc_client_rejected",
  "oidc_wrong_audience",
  "oidc_token_expired",
  "oidc_token_invalid",
  "oidc_access_denied",
  "oidc_provider_error",
  "oidc_no_role",
  "oidc_account_disabled",
  "oidc_throttled",
] as const;

const KNOWN = new Set<string>(LOGIN_ERROR_CODES);

/** The message id for a ``login_error`` code (a generic one for a code this page does not know). */
export function loginErrorId(code: string): string {
  return `auth.loginError.${KNOWN.has(code) ? code : "unknown"}`;
}

/** The ``login_error`` code of the address, removed from it (a reload does not show it again). */
export function takeLoginError(): string | null {
  const url = new URL(window.location.href);
  const code = url.searchParams.get("login_error");
  if (code === null) return null;
  url.searchParams.delete("login_error");
  window.history.replaceState(window.history.state, "", url.pathname + url.search + url.hash);
  return code;
}
