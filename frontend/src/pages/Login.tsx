import { useEffect, useState, type FormEvent } from "react";
import { api, ApiError } from "../api/client";
import type { AuthConfig, LoginCsrf, Me } from "../api/types";
import { Field } from "../components/ui";
import { mapErrors } from "../lib/errors";
import { LanguageMenu, useT } from "../i18n/I18nProvider";
import { loginErrorId, takeLoginError } from "./loginErrors";

export function LoginPage({ onLogin }: { onLogin: (me: Me) => void }) {
  const t = useT();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [fields, setFields] = useState<Record<string, string[]>>({});
  const [message, setMessage] = useState<string | null>(null);
  // A failed sign-in at the identity provider comes back as ?login_error=<code>.
  const [providerError, setProviderError] = useState<string | null>(takeLoginError);
  const [config, setConfig] = useState<AuthConfig | null>(null);

  useEffect(() => {
    // What signs people in here; until it is known, the password form shows.
    api.get<AuthConfig>("/api/auth/config/").then(setConfig, () => setConfig(null));
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setFields({});
    setMessage(null);
    setProviderError(null);
    try {
      // Signing in is a write and needs the CSRF token: this GET sets the
      // csrftoken cookie that the client sends back as X-CSRFToken.
      await api.get<LoginCsrf>("/api/auth/login/");
      const me = await api.post<Me>("/api/auth/login/", { username, password });
      onLogin(me);
    } catch (err) {
      if (err instanceof ApiError) {
        const mapped = mapErrors(err.body, ["username", "password"]);
        setFields(mapped.fields);
        setMessage(mapped.form.join(" ") || (Object.keys(mapped.fields).length ? null : err.message));
      } else {
        setMessage(String(err));
      }
    } finally {
      setBusy(false);
    }
  };

  const oidc = config?.oidc_enabled && config.oidc_login_url ? config : null;
  const local = config?.local_login_enabled ?? true;
  return (
    <div className="login">
      <div className="panel">
        <h1>
          <span className="brand-mark">v</span> vNPU Portal
        </h1>
        <p>{t("auth.intro")}</p>
        {(oidc || providerError !== null) && (
          <div className="oidc">
            {oidc && (
              // A navigation, not a fetch: the identity provider's pages take over.
              <a className="btn primary" href={oidc.oidc_login_url ?? undefined} data-testid="oidc-sign-in">
                {t("auth.signInWith", { provider: oidc.oidc_provider_name ?? "" })}
              </a>
            )}
            {providerError !== null && (
              <div className="field-error" role="alert" data-testid="login-error">
                {t(loginErrorId(providerError))}
              </div>
            )}
            {oidc && local && <p className="muted">{t("auth.orLocal")}</p>}
          </div>
        )}
        {local && (
          <form onSubmit={submit} noValidate>
            <Field label={t("auth.username")} errors={fields.username}>
              <input
                className="input"
                name="username"
                autoComplete="username"
                autoFocus={!oidc}
                value={username}
                onChange={(e) => setUsername(e.target.value)}
              />
            </Field>
            <Field label={t("auth.password")} errors={fields.password}>
              <input
                className="input"
                name="password"
                type="password"
                autoComplete="current-password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
              />
            </Field>
            {message && (
              <div className="field-error" role="alert" data-testid="login-error">
                {message}
              </div>
            )}
            <button className="btn primary" type="submit" disabled={busy}>
              {busy ? t("auth.signingIn") : t("auth.signIn")}
            </button>
          </form>
        )}
        <div className="login-language">
          <LanguageMenu />
        </div>
      </div>
    </div>
  );
}
