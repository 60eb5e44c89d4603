"use client";

import { useRouter } from "next/navigation";
import { Fragment, useId, useState } from "react";
import { api, errorMessage } from "@/components/api-client";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardBody, CardHeader } from "@/components/ui/card";
import { FormError } from "@/components/ui/alert";
import { Dialog } from "@/components/ui/dialog";
import { formatDateTime, formatNumber } from "@/components/ui/format";
import type { Plan } from "@/lib/db/generated/enums";
import type { PlanLimits } from "@/lib/plans";
import type { PlanState } from "@/lib/projects/plan";

export interface PlanChooserProps {
  projectId: string;
  plans: Record<Plan, PlanLimits>;
  state: PlanState;
  usedCu: number;
  resetsAt: string;
}

const allowanceText = (p: PlanLimits) => (p.allowanceCu === null ? "By contract" : `${formatNumber(p.allowanceCu)} CU per ${p.period}`);

/** The plans side by side, the current one marked; switching (with the keys to revoke on a downgrade), overage and the history of changes. */
export function PlanChooser({ projectId, plans, state, usedCu, resetsAt }: PlanChooserProps) {
  const router = useRouter();
  const [pending, setPending] = useState<Plan | "overage" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [downgrade, setDowngrade] = useState<Plan | null>(null);
  const [revoke, setRevoke] = useState<string[]>([]);
  // The switch shows the new setting at once; the page's data catches up on refresh.
  const [overageOn, setOverageOn] = useState(state.overage);
  const [storedOverage, setStoredOverage] = useState(state.overage);
  if (storedOverage !== state.overage) {
    setStoredOverage(state.overage);
    setOverageOn(state.overage);
  }
  const current = plans[state.plan];
  const paid = state.plan !== "FREE";

  const switchTo = async (plan: Plan, revokeKeyIds?: string[]) => {
    setPending(plan);
    setError(null);
    try {
      await api(`/api/projects/${projectId}/plan`, { method: "POST", body: { plan, revokeKeyIds } });
      setDowngrade(null);
      setRevoke([]);
      router.refresh();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setPending(null);
    }
  };

  const choose = (plan: Plan) => {
    if (state.keys.length > plans[plan].maxKeys) {
      setRevoke([]);
      setError(null);
      setDowngrade(plan);
    } else void switchTo(plan);
  };

  const toggleOverage = async (on: boolean) => {
    setPending("overage");
    setError(null);
    setOverageOn(on);
    try {
      await api(`/api/projects/${projectId}/plan/overage`, { method: "PUT", body: { overage: on } });
      router.refresh();
    } catch (e) {
      setOverageOn(!on);
      setError(errorMessage(e));
    } finally {
      setPending(null);
    }
  };

  const target = downgrade ? plans[downgrade] : null;

  return (
    <div className="space-y-8">
      {error && !downgrade ? <FormError>{error}</FormError> : null}
      <ul aria-label="Plans" className="grid gap-4 sm:grid-cols-2 xl:grid-cols-3">
        {(Object.entries(plans) as [Plan, PlanLimits][]).map(([id, p]) => (
          <PlanCard key={id} id={id} plan={p} current={id === state.plan} pending={pending} onChoose={() => choose(id)} />
        ))}
      </ul>
      <OverageCard plan={current} paid={paid} on={overageOn} disabled={!paid || pending !== null} usedCu={usedCu} resetsAt={resetsAt} onToggle={(on) => void toggleOverage(on)} />
      <PlanHistory plans={plans} history={state.history} />
      <DowngradeDialog
        target={target}
        keys={state.keys}
        revoke={revoke}
        onRevoke={setRevoke}
        error={downgrade ? error : null}
        busy={pending !== null}
        switching={downgrade !== null && pending === downgrade}
        onCancel={() => setDowngrade(null)}
        onConfirm={() => downgrade && void switchTo(downgrade, revoke)}
      />
    </div>
  );
}

/** What a plan allows, in the order the cards list it. */
const LIMITS: ReadonlyArray<[term: string, value: (p: PlanLimits) => string]> = [
  ["Allowance", allowanceText],
  ["Throughput", (p) => (p.cuPerSecond === null ? "By contract" : `${formatNumber(p.cuPerSecond)} CU/s`)],
  ["API keys", (p) => formatNumber(p.maxKeys)],
  ["Webhooks", (p) => formatNumber(p.maxWebhooks)],
  ["Messages waiting, per webhook", (p) => formatNumber(p.maxPendingPerWebhook)],
  ["Messages waiting, per project", (p) => formatNumber(p.maxPendingPerProject)],
  ["Blocks per replay", (p) => formatNumber(p.maxReplayBlocks)],
];

function PlanCard({ id, plan, current, pending, onChoose }: { id: Plan; plan: PlanLimits; current: boolean; pending: Plan | "overage" | null; onChoose: () => void }) {
  return (
    <li data-testid={`plan-${id}`} aria-current={current ? "true" : undefined}>
      <Card className={current ? "h-full ring-2 ring-accent" : "h-full"}>
        <CardHeader title={plan.label} as="h2" actions={current ? <Badge tone="accent">Current plan</Badge> : null} />
        <CardBody className="space-y-4">
          <dl className="grid grid-cols-2 gap-x-3 gap-y-2 text-sm">
            {LIMITS.map(([term, value]) => (
              <Fragment key={term}>
                <dt className="text-muted">{term}</dt>
                <dd className="text-fg">{value(plan)}</dd>
              </Fragment>
            ))}
          </dl>
          {current ? null : (
            <Button variant="secondary" size="sm" pending={pending === id} disabled={pending !== null} onClick={onChoose} aria-label={`Switch to ${plan.label}`}>
              Switch to this plan
            </Button>
          )}
        </CardBody>
      </Card>
    </li>
  );
}

function OverageCard({ plan, paid, on, disabled, usedCu, resetsAt, onToggle }: { plan: PlanLimits; paid: boolean; on: boolean; disabled: boolean; usedCu: number; resetsAt: string; onToggle: (on: boolean) => void }) {
  const id = useId();
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        titleId={`${id}-title`}
        title="Overage"
        description={
          plan.allowanceCu === null
            ? "This plan has no fixed allowance."
            : `Used this period: ${formatNumber(usedCu)} of ${formatNumber(plan.allowanceCu)} CU; it resets at ${formatDateTime(resetsAt)}.`
        }
      />
      <CardBody className="space-y-3 text-sm">
        <p className="text-muted">
          Past the allowance, calls are refused with 429 EXCEEDED_QUOTA_LIMIT until it resets. With overage on, a paid plan&apos;s calls keep being served past
          it, and every call is still metered, so the usage beyond the allowance shows on the Usage page. The CU per second limit applies either way.
        </p>
        <label className="flex items-center gap-3">
          <input type="checkbox" role="switch" className="size-4 accent-accent" checked={on} disabled={disabled} onChange={(e) => onToggle(e.target.checked)} />
          <span className="text-fg">{paid ? "Serve calls past the allowance (overage)" : "Overage is available on paid plans"}</span>
        </label>
      </CardBody>
    </Card>
  );
}

function PlanHistory({ plans, history }: { plans: Record<Plan, PlanLimits>; history: PlanState["history"] }) {
  const id = useId();
  return (
    <Card aria-labelledby={`${id}-history`}>
      <CardHeader titleId={`${id}-history`} title="History" description="Plan and overage changes of this project, newest first." />
      <CardBody>
        {history.length === 0 ? (
          <p className="text-sm text-muted">No changes yet.</p>
        ) : (
          <ul className="space-y-2 text-sm" data-testid="plan-history">
            {history.map((c) => (
              <li key={c.id} className="flex flex-wrap gap-x-2">
                <span className="text-muted">{formatDateTime(c.at)}</span>
                <span className="text-fg">
                  {c.fromPlan === c.toPlan
                    ? `Overage turned ${c.overage ? "on" : "off"}`
                    : `${plans[c.fromPlan].label} → ${plans[c.toPlan].label}${c.revokedKeys > 0 ? ` (${c.revokedKeys} key${c.revokedKeys === 1 ? "" : "s"} revoked)` : ""}`}
                </span>
                <span className="text-muted">by {c.by ?? "an administrator"}</span>
              </li>
            ))}
          </ul>
        )}
      </CardBody>
    </Card>
  );
}

/** A switch to a plan that allows fewer keys than the project has: which keys to revoke first. */
function DowngradeDialog({
  target,
  keys,
  revoke,
  onRevoke,
  error,
  busy,
  switching,
  onCancel,
  onConfirm,
}: {
  target: PlanLimits | null;
  keys: PlanState["keys"];
  revoke: string[];
  onRevoke: (ids: string[]) => void;
  error: string | null;
  busy: boolean;
  switching: boolean;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  const mustRevoke = target ? keys.length - target.maxKeys : 0;
  return (
    <Dialog
      open={target !== null}
      onClose={onCancel}
      busy={busy}
      title={target ? `Switch to ${target.label}` : ""}
      description={target ? `${target.label} allows ${target.maxKeys} key${target.maxKeys === 1 ? "" : "s"}; this project has ${keys.length}. Choose ${mustRevoke} to revoke: they stop working at once.` : undefined}
    >
      <fieldset className="space-y-2">
        <legend className="sr-only">Keys to revoke</legend>
        {keys.map((k) => (
          <label key={k.id} className="flex items-center gap-3 text-sm">
            <input type="checkbox" className="size-4" checked={revoke.includes(k.id)} onChange={(e) => onRevoke(e.target.checked ? [...revoke, k.id] : revoke.filter((id) => id !== k.id))} />
            <span className="text-fg">{k.name}</span>
            <code className="text-muted">{k.start}…</code>
            <span className="text-muted">created {formatDateTime(k.createdAt)}</span>
          </label>
        ))}
      </fieldset>
      {error ? <FormError className="mt-3">{error}</FormError> : null}
      <div className="mt-4 flex justify-end gap-2">
        <Button variant="ghost" onClick={onCancel} disabled={busy}>
          Cancel
        </Button>
        <Button variant="danger" pending={switching} disabled={revoke.length < mustRevoke || revoke.length >= keys.length} onClick={onConfirm}>
          Revoke {revoke.length} and switch
        </Button>
      </div>
    </Dialog>
  );
}
