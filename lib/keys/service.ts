import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { PLANS } from "@/lib/plans";
import { getProjectForUser } from "@/lib/projects/service";
import type { z } from "zod";
import type { allowlistSchema } from "./allowlist";
import { decryptKey, generateKeyMaterial, maskKey } from "./secret";
import { services } from "@/lib/services";

export interface KeySummary {
  id: string;
  name: string;
  masked: string;
  createdAt: Date;
  resetAt: Date | null;
  /** Last request with the key, to within the usage flush interval; null: never used. */
  lastUsedAt: Date | null;
  allowedOrigins: string[];
  allowedIps: string[];
}

const summarySelect = { id: true, name: true, start: true, createdAt: true, resetAt: true, lastUsedAt: true, allowedOrigins: true, allowedIps: true } as const;

/** The project's keys that are not revoked, oldest first (the first is the one the Overview shows). */
export async function listKeys(userId: string, projectId: string): Promise<KeySummary[]> {
  await getProjectForUser(userId, projectId);
  const keys = await db().apiKey.findMany({ where: { projectId, revokedAt: null }, select: summarySelect, orderBy: { createdAt: "asc" } });
  return keys.map(({ start, ...k }) => ({ ...k, masked: maskKey(start) }));
}

/** A key of the project that is not revoked; a revoked key, or another project's, is RESOURCE_NOT_FOUND. */
async function findKey(projectId: string, keyId: string) {
  const key = await db().apiKey.findFirst({ where: { id: keyId, projectId, revokedAt: null }, select: { id: true, hash: true, ciphertext: true } });
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
  await services().keyVerifier.change(async (tx) => {
    await tx.apiKey.update({
      where: { id: keyId },
      data: { hash: next.hash, ciphertext: next.ciphertext, start: next.start, resetAt: new Date() },
    });
    return { result: undefined, hashes: [old.hash, next.hash] };
  });
  return next.secret;
}

export async function resetKeyForUser(userId: string, projectId: string, keyId: string): Promise<string> {
  await getProjectForUser(userId, projectId);
  return resetKey(projectId, keyId);
}

export async function createAdditionalKey(userId: string, projectId: string, name: string): Promise<{ id: string; apiKey: string }> {
  const project = await getProjectForUser(userId, projectId);
  const limits = PLANS[project.plan];
  return services().keyVerifier.change(async (tx) => {
    await tx.$queryRaw`SELECT id FROM projects WHERE id = ${projectId} FOR UPDATE`;
    const count = await tx.apiKey.count({ where: { projectId, revokedAt: null } });
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
    return { result: { id, apiKey: key.secret }, hashes: [key.hash] };
  });
}

export async function renameKey(userId: string, projectId: string, keyId: string, name: string): Promise<KeySummary> {
  await getProjectForUser(userId, projectId);
  await findKey(projectId, keyId);
  const { start, ...k } = await db().apiKey.update({ where: { id: keyId }, data: { name }, select: summarySelect });
  return { ...k, masked: maskKey(start) };
}

/**
 * Replaces the key's allowlists (already validated and normalised by allowlistSchema). Takes
 * effect at once here and in every other process: the key's cached verification, which carries
 * the lists, is dropped everywhere.
 */
export async function setKeyAllowlist(userId: string, projectId: string, keyId: string, lists: z.output<typeof allowlistSchema>): Promise<KeySummary> {
  await getProjectForUser(userId, projectId);
  const key = await findKey(projectId, keyId);
  const { start, ...k } = await services().keyVerifier.change(async (tx) => ({
    result: await tx.apiKey.update({ where: { id: keyId }, data: { allowedOrigins: lists.origins, allowedIps: lists.ips }, select: summarySelect }),
    hashes: [key.hash],
  }));
  return { ...k, masked: maskKey(start) };
}

/**
 * Revokes a key: refused from now on in every process ("The API key has been revoked."). The row
 * stays, so usage by key keeps its name. A project keeps at least one working key: the last one
 * can be reset, not revoked.
 */
export async function revokeKey(projectId: string, keyId: string): Promise<void> {
  await services().keyVerifier.change(async (tx) => {
    await tx.$queryRaw`SELECT id FROM projects WHERE id = ${projectId} FOR UPDATE`;
    const key = await tx.apiKey.findFirst({ where: { id: keyId, projectId, revokedAt: null }, select: { hash: true } });
    if (!key) throw new AppError("RESOURCE_NOT_FOUND", "No such key in this project.");
    const active = await tx.apiKey.count({ where: { projectId, revokedAt: null } });
    if (active <= 1) {
      throw new AppError("REJECTED", "This is the project's only key, and a project keeps at least one. Create another key first, or reset this one to replace its secret.");
    }
    await tx.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    return { result: undefined, hashes: [key.hash] };
  });
}

export async function revokeKeyForUser(userId: string, projectId: string, keyId: string): Promise<void> {
  await getProjectForUser(userId, projectId);
  await revokeKey(projectId, keyId);
}
