// The person's designs by project, and a new design from a starter template.
import { useEffect, useState } from "react";
import { api, ApiError } from "../api";
import type { Project, Template } from "../types";
import { SiteNav, type SiteConfig } from "./SiteNav";

interface Summary {
  id: string;
  project_id: number;
  name: string;
  description: string;
  revision: number;
  updated_at: string;
}

interface Props {
  projects: Project[];
  designUrl: (id: string) => string;
  username: string;
  site: SiteConfig;
}

const BLANK: Template = {
  id: "blank", name: "Blank", description: "An input and an output.",
  graph: {
    schema_version: 2,
    nodes: [{ id: "input", kind: "input", name: "Input", x: 40, y: 160 },
            { id: "output", kind: "output", name: "Output", x: 480, y: 160 }],
    edges: [{ from: "input", to: "output", from_port: "out", to_port: "in" }],
    settings: {},
  },
};

export function Home({ projects, designUrl, username, site }: Props) {
  const [designs, setDesigns] = useState<Summary[] | null>(null);
  const [templates, setTemplates] = useState<Template[]>([BLANK]);
  const editable = projects.filter((p) => p.role !== "viewer");
  const [projectId, setProjectId] = useState<number | null>(editable[0]?.id ?? null);
  const [template, setTemplate] = useState("blank");
  const [name, setName] = useState("");
  const [requireEvaluation, setRequireEvaluation] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api<{ designs: Summary[] }>("GET", "/agent-designs").then((d) => setDesigns(d.designs), () => setDesigns([]));
    api<{ templates: Template[] }>("GET", "/agent-designs/templates").then(
      (d) => setTemplates([BLANK, ...d.templates]), () => undefined);
  }, []);

  const create = async (e: React.FormEvent) => {
    e.preventDefault();
    setError(null);
    const t = templates.find((x) => x.id === template) ?? BLANK;
    try {
      const d = await api<{ id: string }>("POST", "/agent-designs", {
        project_id: projectId, name: name.trim() || t.name, graph: t.graph,
        require_evaluation: requireEvaluation,
      });
      window.location.assign(designUrl(d.id));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };

  const chosen = templates.find((x) => x.id === template);
  return (
    <div className="home">
      <header className="topbar">
        <span className="brand">◆ Kionga designer</span>
        <span className="spacer" />
        <span className="muted small">Signed in as {username}</span>
        <SiteNav site={site} current="designer" />
      </header>
      <main className="home-main">
        <section className="card" aria-labelledby="new-title">
          <h2 id="new-title">New design</h2>
          {editable.length === 0 ? <p className="muted">You can edit no project.</p> : (
            <form onSubmit={create} className="new-form">
              <label htmlFor="new-project">Project</label>
              <select id="new-project" value={projectId ?? ""} onChange={(e) => setProjectId(Number(e.target.value))}>
                {editable.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
              </select>
              <label htmlFor="new-template">Start from</label>
              <select id="new-template" value={template} onChange={(e) => setTemplate(e.target.value)}>
                {templates.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}
              </select>
              {chosen && <p className="muted small">{chosen.description}</p>}
              <label htmlFor="new-name">Name</label>
              <input id="new-name" value={name} placeholder={chosen?.name} onChange={(e) => setName(e.target.value)} />
              <label className="check small">
                <input type="checkbox" checked={requireEvaluation}
                       onChange={(e) => setRequireEvaluation(e.target.checked)} />
                {" "}Require a passing evaluation to publish
              </label>
              <button type="submit" className="primary">Create and open</button>
              {error && <p className="error" role="alert">{error}</p>}
            </form>
          )}
        </section>
        <section className="card grow" aria-labelledby="list-title">
          <h2 id="list-title">Designs</h2>
          {designs === null ? <p className="muted">Loading…</p> : designs.length === 0 ? <p className="muted">No designs yet.</p> : (
            projects.map((p) => {
              const mine = designs.filter((d) => d.project_id === p.id);
              if (!mine.length) return null;
              return (
                <div key={p.id}>
                  <h3>{p.name} <span className="muted small">({p.role})</span></h3>
                  <ul className="design-list">
                    {mine.map((d) => (
                      <li key={d.id}>
                        <a href={designUrl(d.id)}>{d.name}</a>
                        <span className="muted small"> rev {d.revision} · {new Date(d.updated_at).toLocaleString()}</span>
                        {d.description && <div className="muted small">{d.description}</div>}
                      </li>
                    ))}
                  </ul>
                </div>
              );
            })
          )}
        </section>
      </main>
    </div>
  );
}
