// The canvas of one design: top bar, palette and graph, inspector. Its state lives in one
// zustand store per design (src/store/), created here from the loaded design.
import { useEffect, useMemo, useState } from "react";
import { api } from "../api";
import { ReactFlowProvider } from "@xyflow/react";
import { CanvasContext, type CanvasState } from "../context";
import { pinIssues } from "../graph";
import { docOf } from "../store/derived";
import { createEditorStore, EditorStoreContext, useEditor } from "../store/editor";
import type { Design, OutputPin, Registry } from "../types";
import { ConflictDialog, NoticeBar } from "./ConflictDialog";
import { useAutosave, useNewerRevisions, useShortcuts, useUnloadGuard, useValidation } from "./editorEffects";
import { FlowCanvas } from "./FlowCanvas";
import { Inspector } from "./Inspector";
import type { SiteConfig } from "./SiteNav";
import { TopBar } from "./TopBar";

interface Props {
  design: Design;
  registry: Registry;
  canEdit: boolean;
  homeUrl: string;
  site: SiteConfig;
}

export function Editor({ design, registry, canEdit, homeUrl, site }: Props) {
  const [store] = useState(() => createEditorStore(design, registry, canEdit));
  return (
    <EditorStoreContext.Provider value={store}>
      <ReactFlowProvider>
        <EditorLayout homeUrl={homeUrl} site={site} />
      </ReactFlowProvider>
    </EditorStoreContext.Provider>
  );
}

function EditorLayout({ homeUrl, site }: { homeUrl: string; site: SiteConfig }) {
  useValidation();
  useAutosave();
  useUnloadGuard();
  useShortcuts();
  useNewerRevisions();
  const registry = useEditor((s) => s.registry);
  const byKind = useEditor((s) => s.byKind);
  const report = useEditor((s) => s.report);
  const doc = useEditor(docOf);
  const runView = useEditor((s) => s.runView);
  const outputPins = useEditor((s) => s.outputPins);
  const designId = useEditor((s) => s.design.id);
  const setOutputPins = useEditor((s) => s.setOutputPins);
  useEffect(() => {
    let live = true;
    api<{ pins: OutputPin[] }>("GET", `/agent-designs/${designId}/pins`)
      .then((d) => { if (live) setOutputPins(d.pins); }, () => undefined);
    return () => { live = false; };
  }, [designId, setOutputPins]);
  // Issues sit where the validated document had them (its indexes), until the next report.
  const pinned = useMemo(() => (report ? pinIssues(report.report.issues, report.doc) : pinIssues([], doc)), [report, doc]);
  const runStates = useMemo(() => runView?.nodes ?? new Map(), [runView]);
  const ctx: CanvasState = useMemo(() => ({ registry, byKind, pinned, runStates, outputPins }),
    [registry, byKind, pinned, runStates, outputPins]);
  return (
    <CanvasContext.Provider value={ctx}>
      <div className="editor">
        <TopBar homeUrl={homeUrl} site={site} />
        <NoticeBar />
        <ConflictDialog />
        <div className="workspace">
          <FlowCanvas pinned={pinned} />
          <Inspector pinned={pinned} />
        </div>
      </div>
    </CanvasContext.Provider>
  );
}
