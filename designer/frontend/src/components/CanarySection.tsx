// The canary of the design's deployed agent, in the test & publish tab: reads the agent's
// operations over CANARY_HOURS and starts, promotes or rolls back a canary through the
// tab's shared answer (lifecycleAnswer).
import { useCallback, useEffect, useRef, useState } from "react";
import { api } from "../api";
import { CanaryPanel, type CanaryAgent, type VersionTotals } from "./CanaryPanel";
import type { Act } from "./lifecycleAnswer";
import type { Version } from "./VersionList";

interface AgentOperations { agent: CanaryAgent; versions: VersionTotals[] }
const CANARY_HOURS = 24;

/** The agent's pod settings, sent again with a canary deploy (the body's defaults would resize it). */
function pickSettings(settings: Record<string, unknown> | undefined): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const k of ["autoscaling", "resources", "require_evaluation"]) {
    if (settings && k in settings) kept[k] = settings[k];
  }
  return kept;
}

interface Props {
  agentId: string;
  versions: Version[];
  canEdit: boolean;
  busy: boolean;
  act: Act;
  /** Reads the design's versions again (a deploy, promote or rollback changed them). */
  onVersions: () => Promise<unknown>;
}

export function CanarySection({ agentId, versions, canEdit, busy, act, onVersions }: Props) {
  const [operations, setOperations] = useState<AgentOperations | null>(null);
  const [percent, setPercent] = useState("10");
  const [choice, setChoice] = useState("");
  const live = useRef(true);
  useEffect(() => () => { live.current = false; }, []);

  const load = useCallback(() => api<AgentOperations>(
    "GET", `/agents/${agentId}/operations?hours=${CANARY_HOURS}`).then(
    (o) => { if (live.current) setOperations(o); }, () => undefined), [agentId]);
  useEffect(() => { void load(); }, [load]);

  const changed = async () => { await onVersions(); await load(); };
  const start = (versionId: string, share: number) => act("Canary", async () => {
    const a = await api<CanaryAgent>("POST", `/agent-versions/${versionId}/deploy`, {
      ...pickSettings(operations?.agent.settings), canary_percent: share });
    await changed();
    return [`Canary v${a.canary?.version} serves ${a.canary?.percent} % of agent ${a.name}'s turns; `
            + `v${a.version} serves the rest.`];
  });
  const promote = () => act("Promote", async () => {
    const a = await api<CanaryAgent>("POST", `/agents/${agentId}/promote`);
    await changed();
    return [`Agent ${a.name} now runs version ${a.version} (canary promoted, hash verified).`];
  });
  const rollback = () => act("Roll back the canary", async () => {
    const a = await api<CanaryAgent>("POST", `/agents/${agentId}/rollback`);
    await changed();
    return [`The canary ended; agent ${a.name} runs version ${a.version} alone.`];
  });

  if (!operations) return null;
  return (<>
    <h3>Canary</h3>
    <CanaryPanel agent={operations.agent} totals={operations.versions}
                 versions={versions.map((v) => ({ id: v.id, number: v.number }))}
                 percent={percent} onPercent={setPercent}
                 choice={choice} onChoice={setChoice} busy={busy} canEdit={canEdit}
                 onStart={start} onPromote={promote} onRollback={rollback} />
  </>);
}
