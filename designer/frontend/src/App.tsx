import { useEffect, useState } from "react";
import { api, ApiError } from "./api";
import { Editor } from "./components/Editor";
import { Home } from "./components/Home";
import type { SiteConfig } from "./components/SiteNav";
import type { Design, Project, Registry } from "./types";

export interface PageConfig {
  design_id: string | null;
  api: string;
  home: string;
  design_url: string;
  username: string;
  site: SiteConfig;
}

interface Loaded {
  projects: Project[];
  registry?: Registry;
  design?: Design;
}

export function App({ config }: { config: PageConfig }) {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const me = api<{ projects: Project[] }>("GET", "/me");
    const work: Promise<Loaded> = config.design_id
      ? Promise.all([me, api<Registry>("GET", "/agent-designs/components"),
                     api<Design>("GET", `/agent-designs/${config.design_id}`)])
          .then(([m, registry, design]) => ({ projects: m.projects, registry, design }))
      : me.then((m) => ({ projects: m.projects }));
    work.then(setLoaded, (e) => setError(e instanceof ApiError && e.status === 404
      ? "This design does not exist, or you may not open it." : String(e instanceof Error ? e.message : e)));
  }, [config.design_id]);
  if (error) {
    return <main className="page-error"><h1>Kionga designer</h1><p role="alert">{error}</p><a href={config.home}>All designs</a></main>;
  }
  if (!loaded) return <p className="loading" role="status">Loading…</p>;
  const designUrl = (id: string) => config.design_url.replace("{id}", id);
  if (loaded.design && loaded.registry) {
    const role = loaded.projects.find((p) => p.id === loaded.design!.project_id)?.role;
    return <Editor design={loaded.design} registry={loaded.registry} canEdit={role !== undefined && role !== "viewer"}
                   homeUrl={config.home} site={config.site} />;
  }
  return <Home projects={loaded.projects} designUrl={designUrl} username={config.username}
               site={config.site} />;
}
