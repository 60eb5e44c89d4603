import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { createAdditionalKey, listKeys, resetKeyForUser, revealKey } from "@/lib/keys/service";
import { hashKey } from "@/lib/keys/secret";
import { uniqueEmail, connectTestDatabase } from "@/lib/testing/harness";
import { completeOnboarding, FIRST_PROJECT_NAME, getProjectForUser, listProjects, renameProject } from "./service";

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => disconnectDb());

const newUser = async () => createUser({ email: uniqueEmail(), password: "a-long-password" });
const input = { name: "Grace", organization: "", useCase: "wallet" };

async function expectError(promise: Promise<unknown>, code: string) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
}

describe("onboarding", () => {
  it("creates My First Project on the free plan with one key, once, even when submitted concurrently", async () => {
    const user = await newUser();
    const results = await Promise.all(Array.from({ length: 5 }, () => completeOnboarding(user.id, input)));
    const ids = new Set(results.map((r) => r.projectId));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const projects = await listProjects(user.id);
    expect(projects).toEqual([{ id: results[0]!.projectId, name: FIRST_PROJECT_NAME, plan: "FREE", createdAt: expect.any(Date) }]);
    expect(await db().apiKey.count({ where: { projectId: results[0]!.projectId } })).toBe(1);
  });
});

describe("projects and keys are scoped to their owner", () => {
  it("answers PERMISSION_DENIED for another user's project and RESOURCE_NOT_FOUND for none", async () => {
    const owner = await newUser();
    const other = await newUser();
    const { projectId } = await completeOnboarding(owner.id, input);
    await expectError(getProjectForUser(other.id, projectId), "PERMISSION_DENIED");
    await expectError(listKeys(other.id, projectId), "PERMISSION_DENIED");
    const [key] = await listKeys(owner.id, projectId);
    await expectError(revealKey(other.id, projectId, key!.id), "PERMISSION_DENIED");
    await expectError(resetKeyForUser(other.id, projectId, key!.id), "PERMISSION_DENIED");
    await expectError(renameProject(other.id, projectId, "Mine now"), "PERMISSION_DENIED");
    await expectError(getProjectForUser(owner.id, "prj_nope"), "RESOURCE_NOT_FOUND");
    await expectError(getProjectForUser(owner.id, "'; DROP TABLE projects; --"), "RESOURCE_NOT_FOUND");
    expect((await getProjectForUser(owner.id, projectId)).name).toBe(FIRST_PROJECT_NAME);
  });

  it("reveals the key it stores encrypted and hashed, resets it, and refuses a second key on the free plan", async () => {
    const user = await newUser();
    const { projectId } = await completeOnboarding(user.id, input);
    const [key] = await listKeys(user.id, projectId);
    expect(key!.masked).toMatch(/^bg_.{4}•+$/);
    const secret = await revealKey(user.id, projectId, key!.id);
    const row = await db().apiKey.findUniqueOrThrow({ where: { id: key!.id }, select: { hash: true, ciphertext: true } });
    expect(row.hash).toBe(hashKey(secret));
    expect(row.ciphertext).not.toContain(secret.slice(3));
    const fresh = await resetKeyForUser(user.id, projectId, key!.id);
    expect(fresh).not.toBe(secret);
    expect(await revealKey(user.id, projectId, key!.id)).toBe(fresh);
    const refusal = await createAdditionalKey(user.id, projectId, "Second").catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(AppError);
    expect((refusal as AppError).code).toBe("REJECTED");
    expect((refusal as AppError).message).toMatch(/Upgrade/);
    expect(await db().apiKey.count({ where: { projectId } })).toBe(1);
  });
});
