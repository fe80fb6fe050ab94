import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App, preloadRoute } from "./App";
import { openEarly } from "./live/early";
import { I18nProvider } from "./i18n/I18nProvider";
import "./styles.css";

// The live snapshot is the slowest thing a page waits for: ask for it first,
// and fetch the page's code while the app asks who is signed in.
openEarly();
preloadRoute(window.location.pathname);

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <I18nProvider>
      <App />
    </I18nProvider>
  </StrictMode>,
);
