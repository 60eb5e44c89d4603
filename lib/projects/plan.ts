import { z } from "zod";
import { db, type Prisma } from "@/lib/db/client";
import { Plan } from "@/lib/db/generated/enums";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { services } from "@/lib/services";
import { PLANS } from "@/lib/plans";
import { getProjectForUser } from "./service";

/** `POST /api/projects/<id>/plan`: the plan to switch to, and the keys to revoke when it allows fewer. */
export const changePlanSchema = z.strictObject({
  plan: z.string({ error: "name the plan to switch to" }).pipe(z.enum(Object.keys(Plan) as [Plan, ...Plan[]], { error: `plan must be one of ${Object.keys(Plan).join(", ")}` })),
  revokeKeyIds: z.array(z.string().max(100)).max(100).optional(),
});
export type ChangePlanInput = z.infer<typeof changePlanSchema>;

/** `PUT /api/projects/<id>/plan/overage`. */
export const overageSchema = z.strictObject({ overage: z.boolean({ error: "overage must be true or false" }) });

export interface PlanChangeView {
  id: string;
  at: string;
  by: string | null;
  fromPlan: Plan;
  toPlan: Plan;
  overage: boolean;
  revokedKeys: number;
}

export interface PlanState {
  plan: Plan;
  overage: boolean;
  keys: { id: string; name: string; start: string; createdAt: string }[];
  /** The last changes, newest first. */
  history: PlanChangeView[];
}

const HISTORY = 20;

/** The project's plan, overage, keys (for a downgrade) and recent changes; another user's project is 404. */
export async function planState(userId: string, projectId: string): Promise<PlanState> {
  await getProjectForUser(userId, projectId);
  const project = await db().project.findUniqueOrThrow({
    where: { id: projectId },
    select: {
      plan: true,
      overage: true,
      keys: { where: { revokedAt: null }, select: { id: true, name: true, start: true, createdAt: true }, orderBy: { createdAt: "asc" } },
      planChanges: { orderBy: { createdAt: "desc" }, take: HISTORY },
    },
  });
  return {
    plan: project.plan,
    overage: project.overage,
    keys: project.keys.map((k) => ({ ...k, createdAt: k.createdAt.toISOString() })),
    history: project.planChanges.map((c) => ({
      id: c.id,
      at: c.createdAt.toISOString(),
      by: c.userEmail,
      fromPlan: c.fromPlan,
      toPlan: c.toPlan,
      overage: c.overage,
      revokedKeys: c.revokedKeys,
    })),
  };
}

/**
 * Runs a change of the project in one transaction answering the SHA-256 of the project's keys:
 * every process asks the database again for them once it commits, so the new plan applies to the
 * next call.
 */
function changeForKeys<T extends string[] | undefined>(work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return services().keyVerifier.change(async (tx) => {
    const hashes = await work(tx);
    return { result: hashes, hashes: hashes ?? [] };
  });
}

/**
 * Switches the project to `plan` at once (no payment here) and records who did it and when. When
 * the plan allows fewer keys than the project has, `revokeKeyIds` must name enough of the
 * project's keys to fit (they are revoked); otherwise 409 REJECTED says how many. Moving to the free
 * plan turns overage off.
 */
export async function changePlan(user: { id: string; email: string }, projectId: string, input: ChangePlanInput): Promise<PlanState> {
  await getProjectForUser(user.id, projectId);
  const target = PLANS[input.plan];
  await changeForKeys(async (tx) => {
    // One change at a time per project: the key count and the revocations are read and made under this lock.
    const [project] = await tx.$queryRaw<{ plan: Plan; overage: boolean }[]>`SELECT plan, overage FROM projects WHERE id = ${projectId} FOR UPDATE`;
    if (!project) throw new AppError("RESOURCE_NOT_FOUND", "No such project.");
    if (project.plan === input.plan) return [];
    const keys = await tx.apiKey.findMany({ where: { projectId, revokedAt: null }, select: { id: true, hash: true } });
    const revoke = [...new Set(input.revokeKeyIds ?? [])];
    const unknown = revoke.filter((id) => !keys.some((k) => k.id === id));
    if (unknown.length > 0) throw new AppError("INVALID_PARAMETER", `revokeKeyIds: ${unknown[0]!.slice(0, 100)} is not a key of this project.`);
    const excess = keys.length - target.maxKeys;
    if (excess > 0 && revoke.length < excess) {
      throw new AppError(
        "REJECTED",
        `The ${target.label} plan allows ${target.maxKeys} key${target.maxKeys === 1 ? "" : "s"} and this project has ${keys.length}: name ${excess} key${excess === 1 ? "" : "s"} to revoke in revokeKeyIds.`,
      );
    }
    if (revoke.length > 0 && revoke.length >= keys.length) throw new AppError("REJECTED", "Keep at least one key: revoke fewer.");
    // Revoked as on the Keys page: the rows stay (usage by key keeps its name), the keys are refused from now on.
    if (revoke.length > 0) await tx.apiKey.updateMany({ where: { projectId, id: { in: revoke } }, data: { revokedAt: new Date() } });
    const overage = input.plan === "FREE" ? false : project.overage;
    await tx.project.update({ where: { id: projectId }, data: { plan: input.plan, overage } });
    await tx.planChange.create({
      data: { id: newId("pch"), projectId, userId: user.id, userEmail: user.email, fromPlan: project.plan, toPlan: input.plan, overage, revokedKeys: revoke.length },
    });
    return keys.map((k) => k.hash);
  });
  return planState(user.id, projectId);
}

/** Turns overage on or off (paid plans only: the free plan answers 409 REJECTED), recorded like a plan change. */
export async function setOverage(user: { id: string; email: string }, projectId: string, overage: boolean): Promise<PlanState> {
  await getProjectForUser(user.id, projectId);
  await changeForKeys(async (tx) => {
    const [project] = await tx.$queryRaw<{ plan: Plan; overage: boolean }[]>`SELECT plan, overage FROM projects WHERE id = ${projectId} FOR UPDATE`;
    if (!project) throw new AppError("RESOURCE_NOT_FOUND", "No such project.");
    if (overage && project.plan === "FREE") throw new AppError("REJECTED", "Overage is for paid plans: the free plan stops at its daily allowance. Switch to a paid plan first.");
    if (project.overage === overage) return [];
    await tx.project.update({ where: { id: projectId }, data: { overage } });
    await tx.planChange.create({
      data: { id: newId("pch"), projectId, userId: user.id, userEmail: user.email, fromPlan: project.plan, toPlan: project.plan, overage },
    });
    const keys = await tx.apiKey.findMany({ where: { projectId }, select: { hash: true } });
    return keys.map((k) => k.hash);
  });
  return planState(user.id, projectId);
}

/**
 * The admin CLI's `set-plan`: no session and no key check (an operator may leave a project with
 * more keys than its plan allows), recorded like a console change with no user. False: no such project.
 */
export async function setPlanAsAdmin(projectId: string, plan: Plan): Promise<boolean> {
  const hashes = await changeForKeys(async (tx) => {
    const [project] = await tx.$queryRaw<{ plan: Plan; overage: boolean }[]>`SELECT plan, overage FROM projects WHERE id = ${projectId} FOR UPDATE`;
    if (!project) return undefined;
    if (project.plan === plan) return [];
    const overage = plan === "FREE" ? false : project.overage;
    await tx.project.update({ where: { id: projectId }, data: { plan, overage } });
    await tx.planChange.create({ data: { id: newId("pch"), projectId, fromPlan: project.plan, toPlan: plan, overage } });
    return (await tx.apiKey.findMany({ where: { projectId }, select: { hash: true } })).map((k) => k.hash);
  });
  if (hashes === undefined) return false;
  return true;
}
