import { db } from "@/lib/db/client";
import type { Plan } from "@/lib/db/generated/enums";
import { verificationRequired } from "@/lib/auth/email-verification";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { generateKeyMaterial } from "@/lib/keys/secret";
import { services } from "@/lib/services";
import type { OnboardingInput } from "./schema";

export const FIRST_PROJECT_NAME = "My First Project";

/** Projects one account may own (the onboarding project included). */
export const MAX_PROJECTS_PER_USER = 10;

export interface ProjectSummary {
  id: string;
  name: string;
  plan: Plan;
  createdAt: Date;
}

const summary = { id: true, name: true, plan: true, createdAt: true } as const;

export async function listProjects(userId: string): Promise<ProjectSummary[]> {
  return db().project.findMany({ where: { ownerId: userId }, select: summary, orderBy: { createdAt: "asc" } });
}

/**
 * The project, if the user may see it. Another user's project answers RESOURCE_NOT_FOUND, the
 * same as one that does not exist, so ids of other accounts' projects cannot be confirmed.
 */
export async function getProjectForUser(userId: string, projectId: string): Promise<ProjectSummary & { organization: string | null }> {
  if (!/^prj_[1-9A-HJ-NP-Za-km-z]{1,40}$/.test(projectId)) throw new AppError("RESOURCE_NOT_FOUND", "No such project.");
  const project = await db().project.findUnique({
    where: { id: projectId },
    select: { ...summary, organization: true, ownerId: true },
  });
  if (!project || project.ownerId !== userId) throw new AppError("RESOURCE_NOT_FOUND", "No such project.");
  const { ownerId: _owner, ...rest } = project;
  return rest;
}

/** Creates a project with its first key, in one transaction. */
async function createProjectWithKey(
  tx: Parameters<Parameters<ReturnType<typeof db>["$transaction"]>[0]>[0],
  input: { ownerId: string; name: string; organization?: string | null; useCase?: string | null },
): Promise<{ projectId: string; apiKey: string; hash: string }> {
  const projectId = newId("prj");
  const key = generateKeyMaterial();
  await tx.project.create({
    data: {
      id: projectId,
      name: input.name,
      organization: input.organization || null,
      useCase: input.useCase ?? null,
      ownerId: input.ownerId,
      keys: { create: { id: newId("key"), hash: key.hash, ciphertext: key.ciphertext, start: key.start } },
    },
  });
  return { projectId, apiKey: key.secret, hash: key.hash };
}

/**
 * Onboarding: creates "My First Project" on the free plan with its one key. The user row is
 * locked first, so a double submit or a reload returns the project created the first time.
 */
export async function completeOnboarding(userId: string, input: OnboardingInput): Promise<{ projectId: string; created: boolean }> {
  return services().keyVerifier.change<{ projectId: string; created: boolean }>(async (tx) => {
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM users WHERE id = ${userId} FOR UPDATE`;
    if (locked.length === 0) throw new AppError("AUTHENTICATION_FAILED", "Your session is no longer valid. Please sign in again.");
    const existing = await tx.project.findFirst({ where: { ownerId: userId }, select: { id: true }, orderBy: { createdAt: "asc" } });
    if (existing) return { result: { projectId: existing.id, created: false }, hashes: [] };
    await tx.user.update({ where: { id: userId }, data: { name: input.name } });
    const { projectId, hash } = await createProjectWithKey(tx, {
      ownerId: userId,
      name: FIRST_PROJECT_NAME,
      organization: input.organization,
      useCase: input.useCase,
    });
    return { result: { projectId, created: true }, hashes: [hash] };
  });
}

/**
 * Creates a project with its key, up to MAX_PROJECTS_PER_USER per account, and only the first
 * one while the account's email address awaits verification (when verification is required).
 * The user row is locked while counting (as onboarding does), so parallel creates cannot pass
 * the cap together.
 */
export async function createProject(userId: string, name: string): Promise<{ projectId: string; apiKey: string }> {
  return services().keyVerifier.change(async (tx) => {
    const locked = await tx.$queryRaw<{ email_verified_at: Date | null }[]>`SELECT email_verified_at FROM users WHERE id = ${userId} FOR UPDATE`;
    if (locked.length === 0) throw new AppError("AUTHENTICATION_FAILED", "Your session is no longer valid. Please sign in again.");
    const count = await tx.project.count({ where: { ownerId: userId } });
    if (count >= MAX_PROJECTS_PER_USER) {
      throw new AppError("REJECTED", `An account can have at most ${MAX_PROJECTS_PER_USER} projects, and yours has reached that limit.`);
    }
    if (count >= 1 && locked[0]?.email_verified_at === null && verificationRequired()) {
      throw new AppError("PERMISSION_DENIED", "Verify your email address to create more projects: open the link we emailed you, or send a new one from the banner above.");
    }
    const { hash, ...created } = await createProjectWithKey(tx, { ownerId: userId, name });
    return { result: created, hashes: [hash] };
  });
}

export async function renameProject(userId: string, projectId: string, name: string): Promise<void> {
  await getProjectForUser(userId, projectId);
  await db().project.update({ where: { id: projectId }, data: { name } });
}
