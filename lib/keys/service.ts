import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { PLANS } from "@/lib/plans";
import { getProjectForUser } from "@/lib/projects/service";
import { decryptKey, generateKeyMaterial, maskKey } from "./secret";
import { keyVerifier } from "./verifier";

export interface KeySummary {
  id: string;
  name: string;
  masked: string;
  createdAt: Date;
  resetAt: Date | null;
}

export async function listKeys(userId: string, projectId: string): Promise<KeySummary[]> {
  await getProjectForUser(userId, projectId);
  const keys = await db().apiKey.findMany({
    where: { projectId },
    select: { id: true, name: true, start: true, createdAt: true, resetAt: true },
    orderBy: { createdAt: "asc" },
  });
  return keys.map(({ start, ...k }) => ({ ...k, masked: maskKey(start) }));
}

async function findKey(projectId: string, keyId: string) {
  const key = await db().apiKey.findFirst({ where: { id: keyId, projectId }, select: { id: true, hash: true, ciphertext: true } });
  if (!key) throw new AppError("RESOURCE_NOT_FOUND", "No such key in this project.");
  return key;
}

export async function revealKey(userId: string, projectId: string, keyId: string): Promise<string> {
  await getProjectForUser(userId, projectId);
  return decryptKey((await findKey(projectId, keyId)).ciphertext);
}

/**
 * Replaces the secret; the old one stops working at once (cache dropped here and in other
 * processes). Every new key is announced the same way, so a process that cached it as unknown
 * (someone sent it before it existed) accepts it at once, not only after KEY_CACHE_TTL_MS.
 */
export async function resetKey(projectId: string, keyId: string): Promise<string> {
  const old = await findKey(projectId, keyId);
  const next = generateKeyMaterial();
  await db().apiKey.update({
    where: { id: keyId },
    data: { hash: next.hash, ciphertext: next.ciphertext, start: next.start, resetAt: new Date() },
  });
  await keyVerifier().invalidate(old.hash);
  await keyVerifier().invalidate(next.hash);
  return next.secret;
}

export async function resetKeyForUser(userId: string, projectId: string, keyId: string): Promise<string> {
  await getProjectForUser(userId, projectId);
  return resetKey(projectId, keyId);
}

export async function createAdditionalKey(userId: string, projectId: string, name: string): Promise<{ id: string; apiKey: string }> {
  const project = await getProjectForUser(userId, projectId);
  const limits = PLANS[project.plan];
  const created = await db().$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM projects WHERE id = ${projectId} FOR UPDATE`;
    const count = await tx.apiKey.count({ where: { projectId } });
    if (count >= limits.maxKeys) {
      throw new AppError(
        "REJECTED",
        limits.maxKeys === 1
          ? `The ${limits.label} plan includes one API key. Upgrade the plan to create more keys.`
          : `The ${limits.label} plan includes ${limits.maxKeys} API keys. Upgrade the plan to create more keys.`,
      );
    }
    const key = generateKeyMaterial();
    const id = newId("key");
    await tx.apiKey.create({ data: { id, projectId, name, hash: key.hash, ciphertext: key.ciphertext, start: key.start } });
    return { id, apiKey: key.secret, hash: key.hash };
  });
  await keyVerifier().invalidate(created.hash);
  return { id: created.id, apiKey: created.apiKey };
}
