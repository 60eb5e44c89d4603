"use client";

import { useRouter } from "next/navigation";
import { useId, useState } from "react";
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
  const overageId = useId();
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
  const mustRevoke = target ? state.keys.length - target.maxKeys : 0;

  return (
    <div className="space-y-8">
      {error && !downgrade ? <FormError>{error}</FormError> : null}
      <ul aria-label="Plans" className="grid gap-4 sm:grid-cols-2 xl:grid-cols-3">
        {(Object.entries(plans) as [Plan, PlanLimits][]).map(([id, p]) => {
          const isCurrent = id === state.plan;
          return (
            <li key={id} data-testid={`plan-${id}`} aria-current={isCurrent ? "true" : undefined}>
              <Card className={isCurrent ? "h-full ring-2 ring-accent" : "h-full"}>
                <CardHeader title={p.label} as="h2" actions={isCurrent ? <Badge tone="accent">Current plan</Badge> : null} />
                <CardBody className="space-y-4">
                  <dl className="grid grid-cols-2 gap-x-3 gap-y-2 text-sm">
                    <dt className="text-muted">Allowance</dt>
                    <dd className="text-fg">{allowanceText(p)}</dd>
                    <dt className="text-muted">Throughput</dt>
                    <dd className="text-fg">{p.cuPerSecond === null ? "By contract" : `${formatNumber(p.cuPerSecond)} CU/s`}</dd>
                    <dt className="text-muted">API keys</dt>
                    <dd className="text-fg">{formatNumber(p.maxKeys)}</dd>
                    <dt className="text-muted">Webhooks</dt>
                    <dd className="text-fg">{formatNumber(p.maxWebhooks)}</dd>
                    <dt className="text-muted">Messages waiting, per webhook</dt>
                    <dd className="text-fg">{formatNumber(p.maxPendingPerWebhook)}</dd>
                    <dt className="text-muted">Messages waiting, per project</dt>
                    <dd className="text-fg">{formatNumber(p.maxPendingPerProject)}</dd>
                    <dt className="text-muted">Blocks per replay</dt>
                    <dd className="text-fg">{formatNumber(p.maxReplayBlocks)}</dd>
                  </dl>
                  {isCurrent ? null : (
                    <Button variant="secondary" size="sm" pending={pending === id} disabled={pending !== null} onClick={() => choose(id)} aria-label={`Switch to ${p.label}`}>
                      Switch to this plan
                    </Button>
                  )}
                </CardBody>
              </Card>
            </li>
          );
        })}
      </ul>

      <Card aria-labelledby={`${overageId}-title`}>
        <CardHeader
          titleId={`${overageId}-title`}
          title="Overage"
          description={
            current.allowanceCu === null
              ? "This plan has no fixed allowance."
              : `Used this period: ${formatNumber(usedCu)} of ${formatNumber(current.allowanceCu)} CU; it resets at ${formatDateTime(resetsAt)}.`
          }
        />
        <CardBody className="space-y-3 text-sm">
          <p className="text-muted">
            Past the allowance, calls are refused with 429 EXCEEDED_QUOTA_LIMIT until it resets. With overage on, a paid plan&apos;s calls keep being served past
            it, and every call is still metered, so the usage beyond the allowance shows on the Usage page. The CU per second limit applies either way.
          </p>
          <label className="flex items-center gap-3">
            <input
              type="checkbox"
              role="switch"
              className="size-4 accent-accent"
              checked={overageOn}
              disabled={!paid || pending !== null}
              onChange={(e) => void toggleOverage(e.target.checked)}
            />
            <span className="text-fg">{paid ? "Serve calls past the allowance (overage)" : "Overage is available on paid plans"}</span>
          </label>
        </CardBody>
      </Card>

      <Card aria-labelledby={`${overageId}-history`}>
        <CardHeader titleId={`${overageId}-history`} title="History" description="Plan and overage changes of this project, newest first." />
        <CardBody>
          {state.history.length === 0 ? (
            <p className="text-sm text-muted">No changes yet.</p>
          ) : (
            <ul className="space-y-2 text-sm" data-testid="plan-history">
              {state.history.map((c) => (
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

      <Dialog
        open={downgrade !== null}
        onClose={() => setDowngrade(null)}
        busy={pending !== null}
        title={target ? `Switch to ${target.label}` : ""}
        description={target ? `${target.label} allows ${target.maxKeys} key${target.maxKeys === 1 ? "" : "s"}; this project has ${state.keys.length}. Choose ${mustRevoke} to revoke: they stop working at once.` : undefined}
      >
        <fieldset className="space-y-2">
          <legend className="sr-only">Keys to revoke</legend>
          {state.keys.map((k) => (
            <label key={k.id} className="flex items-center gap-3 text-sm">
              <input
                type="checkbox"
                className="size-4"
                checked={revoke.includes(k.id)}
                onChange={(e) => setRevoke(e.target.checked ? [...revoke, k.id] : revoke.filter((id) => id !== k.id))}
              />
              <span className="text-fg">{k.name}</span>
              <code className="text-muted">{k.start}…</code>
              <span className="text-muted">created {formatDateTime(k.createdAt)}</span>
            </label>
          ))}
        </fieldset>
        {error && downgrade ? <FormError className="mt-3">{error}</FormError> : null}
        <div className="mt-4 flex justify-end gap-2">
          <Button variant="ghost" onClick={() => setDowngrade(null)} disabled={pending !== null}>
            Cancel
          </Button>
          <Button variant="danger" pending={pending === downgrade} disabled={revoke.length < mustRevoke || revoke.length >= state.keys.length} onClick={() => downgrade && void switchTo(downgrade, revoke)}>
            Revoke {revoke.length} and switch
          </Button>
        </div>
      </Dialog>
    </div>
  );
}
