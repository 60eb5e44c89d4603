import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { createAdditionalKey, listKeys, resetKeyForUser, revealKey } from "@/lib/keys/service";
import { hashKey } from "@/lib/keys/secret";
import { uniqueEmail, connectTestDatabase } from "@/lib/testing/harness";
import { completeOnboarding, createProject, FIRST_PROJECT_NAME, getProjectForUser, listProjects, MAX_PROJECTS_PER_USER, renameProject } from "./service";

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => disconnectDb());

const newUser = async () => createUser({ email: uniqueEmail(), password: "a-long-password" });
const input = { name: "Grace", organization: "", useCase: "wallet" };

/** The code and message a refused call answers with. */
async function refusalOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return (error as AppError).toJSON();
}

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
  it("answers RESOURCE_NOT_FOUND alike for another user's project and for none", async () => {
    const owner = await newUser();
    const other = await newUser();
    const { projectId } = await completeOnboarding(owner.id, input);
    const theirs = await refusalOf(getProjectForUser(other.id, projectId));
    const none = await refusalOf(getProjectForUser(other.id, "prj_1111111111111111"));
    expect(theirs).toEqual({ code: "RESOURCE_NOT_FOUND", message: "No such project." });
    expect(none).toEqual(theirs);
    await expectError(listKeys(other.id, projectId), "RESOURCE_NOT_FOUND");
    const [key] = await listKeys(owner.id, projectId);
    await expectError(revealKey(other.id, projectId, key!.id), "RESOURCE_NOT_FOUND");
    await expectError(resetKeyForUser(other.id, projectId, key!.id), "RESOURCE_NOT_FOUND");
    await expectError(renameProject(other.id, projectId, "Mine now"), "RESOURCE_NOT_FOUND");
    expect((await getProjectForUser(owner.id, projectId)).name).toBe(FIRST_PROJECT_NAME);
    await expectError(getProjectForUser(owner.id, "prj_nope"), "RESOURCE_NOT_FOUND");
    await expectError(getProjectForUser(owner.id, "'; DROP TABLE projects; --"), "RESOURCE_NOT_FOUND");
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

describe("projects per account", () => {
  it(`caps an account at ${MAX_PROJECTS_PER_USER} projects, the onboarding one included, even when created in parallel`, async () => {
    const user = await newUser();
    await completeOnboarding(user.id, input);
    const results = await Promise.allSettled(Array.from({ length: 15 }, (_, i) => createProject(user.id, `Parallel ${i}`)));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(MAX_PROJECTS_PER_USER - 1);
    const refusals = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
    expect(refusals).toHaveLength(15 - (MAX_PROJECTS_PER_USER - 1));
    for (const e of refusals) {
      expect(e).toBeInstanceOf(AppError);
      expect((e as AppError).toJSON()).toEqual({ code: "REJECTED", message: "An account can have at most 10 projects, and yours has reached that limit." });
      expect((e as AppError).status).toBe(409);
    }
    expect(await db().project.count({ where: { ownerId: user.id } })).toBe(MAX_PROJECTS_PER_USER);
    expect(await db().apiKey.count({ where: { project: { ownerId: user.id } } })).toBe(MAX_PROJECTS_PER_USER);
  });
});
