import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as overageRoute from "@/app/api/projects/[projectId]/plan/overage/route";
import * as planRoute from "@/app/api/projects/[projectId]/plan/route";
import { parseBody } from "@/lib/api/route";
import { db, disconnectDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { generateKeyMaterial } from "@/lib/keys/secret";
import { connectTestDatabase, createTestProject } from "@/lib/testing/harness";
import { changePlan, changePlanSchema, overageSchema, planState, setOverage } from "./plan";

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => disconnectDb());

async function ownerOf(p: { userId: string; email: string }) {
  return { id: p.userId, email: p.email };
}

async function addKeys(projectId: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = generateKeyMaterial();
    const id = newId("key");
    await db().apiKey.create({ data: { id, projectId, name: `Key ${i + 2}`, hash: key.hash, ciphertext: key.ciphertext, start: key.start } });
    ids.push(id);
  }
  return ids;
}

async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AppError) return { status: e.status, code: e.code, message: e.message };
    throw e;
  }
  throw new Error("not refused");
}

const jsonRequest = (body: string) => new Request("http://localhost:3000/api/projects/prj_x/plan", { method: "POST", headers: { "Content-Type": "application/json" }, body });

describe("plan routes", () => {
  it("refuse changes from another site before anything else", async () => {
    const params = { params: Promise.resolve({ projectId: "prj_x" }) };
    for (const [handler, method] of [
      [planRoute.POST, "POST"],
      [overageRoute.PUT, "PUT"],
    ] as const) {
      const res = await handler(new Request("http://localhost:3000/api/projects/prj_x/plan", { method, headers: { "Content-Type": "application/json", Origin: "https://evil.example" }, body: "{}" }), params);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: "PERMISSION_DENIED" });
    }
  });

  it("answer 400 naming what is wrong with a body", async () => {
    await expect(parseBody(jsonRequest("{}"), changePlanSchema)).rejects.toMatchObject({ code: "MISSING_REQUIRED_PARAMETER", message: expect.stringContaining("plan") });
    await expect(parseBody(jsonRequest('{"plan":"GOLD"}'), changePlanSchema)).rejects.toMatchObject({ code: "INVALID_PARAMETER", message: expect.stringContaining("plan must be one of FREE") });
    await expect(parseBody(jsonRequest('{"plan":"FREE","revokeKeyIds":"key_1"}'), changePlanSchema)).rejects.toMatchObject({ code: "INVALID_PARAMETER", message: expect.stringContaining("revokeKeyIds") });
    await expect(parseBody(jsonRequest('{"plan":"FREE","extra":1}'), changePlanSchema)).rejects.toMatchObject({ code: "INVALID_PARAMETER" });
    await expect(parseBody(jsonRequest('{"overage":"yes"}'), overageSchema)).rejects.toMatchObject({ code: "INVALID_PARAMETER", message: expect.stringContaining("overage must be true or false") });
    await expect(parseBody(jsonRequest("not json"), overageSchema)).rejects.toMatchObject({ code: "INVALID_PARAMETER", message: expect.stringMatching(/^The request body is not valid JSON \(/) });
  });
});

describe("changing the plan", () => {
  it("switches at once and records who and when, newest first", async () => {
    const p = await createTestProject("Upgrade");
    const before = Date.now();
    const state = await changePlan(await ownerOf(p), p.projectId, { plan: "DEVELOPER" });
    expect(state.plan).toBe("DEVELOPER");
    expect((await db().project.findUniqueOrThrow({ where: { id: p.projectId } })).plan).toBe("DEVELOPER");
    await changePlan(await ownerOf(p), p.projectId, { plan: "BUSINESS" });
    const { history } = await planState(p.userId, p.projectId);
    expect(history).toEqual([
      { id: expect.stringMatching(/^pch_/), at: expect.any(String), by: p.email, fromPlan: "DEVELOPER", toPlan: "BUSINESS", overage: false, revokedKeys: 0 },
      { id: expect.stringMatching(/^pch_/), at: expect.any(String), by: p.email, fromPlan: "FREE", toPlan: "DEVELOPER", overage: false, revokedKeys: 0 },
    ]);
    expect(Date.parse(history[1]!.at)).toBeGreaterThanOrEqual(before - 1000);
    // The same plan again changes nothing and records nothing.
    await changePlan(await ownerOf(p), p.projectId, { plan: "BUSINESS" });
    expect((await planState(p.userId, p.projectId)).history).toHaveLength(2);
  });

  it("refuses a downgrade below the keys in use unless the keys to revoke are named, then revokes them", async () => {
    const p = await createTestProject("Many keys", "DEVELOPER");
    const extra = await addKeys(p.projectId, 3); // 4 keys; Starter Plus allows 3, the free plan 1
    expect(await refusal(changePlan(await ownerOf(p), p.projectId, { plan: "FREE" }))).toEqual({
      status: 409,
      code: "REJECTED",
      message: "The Starter (free) plan allows 1 key and this project has 4: name 3 keys to revoke in revokeKeyIds.",
    });
    expect(await refusal(changePlan(await ownerOf(p), p.projectId, { plan: "FREE", revokeKeyIds: extra.slice(0, 2) }))).toMatchObject({ status: 409, message: expect.stringContaining("name 3 keys") });
    expect(await refusal(changePlan(await ownerOf(p), p.projectId, { plan: "FREE", revokeKeyIds: ["key_nope"] }))).toEqual({
      status: 400,
      code: "INVALID_PARAMETER",
      message: "revokeKeyIds: key_nope is not a key of this project.",
    });
    const all = (await db().apiKey.findMany({ where: { projectId: p.projectId }, orderBy: { createdAt: "asc" } })).map((k) => k.id);
    expect(await refusal(changePlan(await ownerOf(p), p.projectId, { plan: "FREE", revokeKeyIds: all }))).toMatchObject({ status: 409, message: expect.stringContaining("Keep at least one key") });
    // Refused: nothing changed.
    expect(await db().apiKey.count({ where: { projectId: p.projectId, revokedAt: null } })).toBe(4);
    expect((await planState(p.userId, p.projectId)).plan).toBe("DEVELOPER");

    const state = await changePlan(await ownerOf(p), p.projectId, { plan: "FREE", revokeKeyIds: extra });
    expect(state.plan).toBe("FREE");
    expect(state.keys.map((k) => k.id)).toEqual(all.filter((id) => !extra.includes(id)));
    expect(state.history[0]).toMatchObject({ fromPlan: "DEVELOPER", toPlan: "FREE", revokedKeys: 3 });
    // Revoked as on the Keys page: the rows stay, marked.
    expect(await db().apiKey.count({ where: { projectId: p.projectId, id: { in: extra }, revokedAt: { not: null } } })).toBe(3);
    // Enough room: no key needs naming.
    expect((await changePlan(await ownerOf(p), p.projectId, { plan: "STARTER_PLUS" })).plan).toBe("STARTER_PLUS");
  });

  it("turns overage on and off on a paid plan (recorded), never on the free plan, and off when moving to it", async () => {
    const p = await createTestProject("Overage", "BUSINESS");
    const on = await setOverage(await ownerOf(p), p.projectId, true);
    expect(on.overage).toBe(true);
    expect(on.history[0]).toMatchObject({ fromPlan: "BUSINESS", toPlan: "BUSINESS", overage: true, by: p.email });
    const free = await changePlan(await ownerOf(p), p.projectId, { plan: "FREE" });
    expect(free.overage).toBe(false);
    expect(await refusal(setOverage(await ownerOf(p), p.projectId, true))).toMatchObject({ status: 409, code: "REJECTED" });
  });

  it("answers 404 for another user's project, as for one that does not exist", async () => {
    const mine = await createTestProject("Mine");
    const theirs = await createTestProject("Theirs");
    const notFound = { status: 404, code: "RESOURCE_NOT_FOUND", message: "No such project." };
    expect(await refusal(planState(mine.userId, theirs.projectId))).toEqual(notFound);
    expect(await refusal(changePlan(await ownerOf(mine), theirs.projectId, { plan: "BUSINESS" }))).toEqual(notFound);
    expect(await refusal(setOverage(await ownerOf(mine), theirs.projectId, true))).toEqual(notFound);
    expect(await refusal(planState(mine.userId, "prj_doesnotexist"))).toEqual(notFound);
    expect((await db().project.findUniqueOrThrow({ where: { id: theirs.projectId } })).plan).toBe("FREE");
  });
});
