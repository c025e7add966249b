import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "@xyflow/react/dist/style.css";
import "./styles.css";
import { setApiBase } from "./api";
import { App, type PageConfig } from "./App";

// Config comes from <script type="application/json"> (never executed: CSP allows only our files).
const config = JSON.parse(document.getElementById("designer-config")!.textContent!) as PageConfig;
setApiBase(config.api);
createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App config={config} />
  </StrictMode>,
);
