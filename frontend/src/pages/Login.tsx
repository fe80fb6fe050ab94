import { useState, type FormEvent } from "react";
import { api, ApiError } from "../api/client";
import type { LoginCsrf, Me } from "../api/types";
import { Field } from "../components/ui";
import { mapErrors } from "../lib/errors";
import { LanguageMenu, useT } from "../i18n/I18nProvider";

export function LoginPage({ onLogin }: { onLogin: (me: Me) => void }) {
  const t = useT();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [fields, setFields] = useState<Record<string, string[]>>({});
  const [message, setMessage] = useState<string | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setFields({});
    setMessage(null);
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

  return (
    <div className="login">
      <div className="panel">
        <h1>
          <span className="brand-mark">v</span> vNPU Portal
        </h1>
        <p>{t("auth.intro")}</p>
        <form onSubmit={submit} noValidate>
          <Field label={t("auth.username")} errors={fields.username}>
            <input
              className="input"
              name="username"
              autoComplete="username"
              autoFocus
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
        <div className="login-language">
          <LanguageMenu />
        </div>
      </div>
    </div>
  );
}
