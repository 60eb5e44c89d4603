import { execFile } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, disconnectDb } from "@/lib/db/client";
import { hashKey } from "@/lib/keys/secret";
import { uniqueEmail, connectTestDatabase } from "@/lib/testing/harness";

const root = path.resolve(import.meta.dirname, "..");
let databaseUrl: string;

function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string; json: unknown }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, "node_modules", "tsx", "dist", "cli.mjs"), "bin/admin.ts", ...args],
      { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl } },
      (error, stdout, stderr) => {
        const code = error ? Number(error.code ?? 1) : 0;
        const text = code === 0 ? stdout : stderr.trim().split("\n").at(-1) ?? "";
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ code, stdout, stderr, json });
      },
    );
  });
}

beforeAll(async () => {
  databaseUrl = await connectTestDatabase();
});
afterAll(async () => disconnectDb());

describe("admin CLI", () => {
  it("creates a user and a project, lists it, resets its key and sets its plan", async () => {
    const email = uniqueEmail("admin");
    const user = await admin("create-user", "--email", email, "--password", "a-long-password");
    expect(user.code).toBe(0);
    expect(user.json).toEqual({ userId: expect.stringMatching(/^usr_/), email });

    const created = await admin("create-project", "--email", email, "--name", "Indexer");
    expect(created.code).toBe(0);
    const { projectId, apiKey } = created.json as { projectId: string; apiKey: string };
    expect(projectId).toMatch(/^prj_/);
    expect(apiKey).toMatch(/^bg_[1-9A-HJ-NP-Za-km-z]{30,36}$/);
    const stored = await db().apiKey.findFirstOrThrow({ where: { projectId }, select: { hash: true, ciphertext: true } });
    expect(stored.hash).toBe(hashKey(apiKey));
    expect(stored.ciphertext).not.toContain(apiKey);

    const listed = await admin("list-projects", "--email", email);
    expect(listed.json).toEqual([{ projectId, name: "Indexer", plan: "FREE", createdAt: expect.any(String) }]);

    const reset = await admin("reset-key", "--project", projectId);
    const fresh = (reset.json as { apiKey: string }).apiKey;
    expect(fresh).not.toBe(apiKey);
    const after = await db().apiKey.findFirstOrThrow({ where: { projectId }, select: { hash: true } });
    expect(after.hash).toBe(hashKey(fresh));

    const plan = await admin("set-plan", "--project", projectId, "--plan", "ENTERPRISE");
    expect(plan.json).toEqual({ projectId, plan: "ENTERPRISE" });
    expect((await db().project.findUniqueOrThrow({ where: { id: projectId } })).plan).toBe("ENTERPRISE");
    // A plan by label or in any case, as people write it.
    for (const [name, id] of [["business", "BUSINESS"], ["Starter Plus", "STARTER_PLUS"], ["starter_plus", "STARTER_PLUS"], ["Starter (free)", "FREE"], ["developer", "DEVELOPER"]] as const) {
      expect((await admin("set-plan", "--project", projectId, "--plan", name)).json).toEqual({ projectId, plan: id });
      expect((await db().project.findUniqueOrThrow({ where: { id: projectId } })).plan).toBe(id);
    }
    // Recorded as the Plans page's history shows it, with no user: FREE → ENTERPRISE, then the five above.
    const changes = await db().planChange.findMany({ where: { projectId }, orderBy: { createdAt: "asc" } });
    expect(changes.map((c) => [c.fromPlan, c.toPlan, c.userId])).toEqual([
      ["FREE", "ENTERPRISE", null],
      ["ENTERPRISE", "BUSINESS", null],
      ["BUSINESS", "STARTER_PLUS", null],
      ["STARTER_PLUS", "FREE", null],
      ["FREE", "DEVELOPER", null],
    ]);
  });

  it("exits non-zero with a JSON error for bad input, writing nothing", async () => {
    const before = await db().user.count();
    const cases: Array<[string[], string]> = [
      [[], "INVALID_PARAMETER"],
      [["explode"], "INVALID_PARAMETER"],
      [["create-user", "--email", "not-an-email", "--password", "a-long-password"], "INVALID_PARAMETER"],
      [["create-user", "--email", uniqueEmail(), "--password", "short"], "INVALID_PARAMETER"],
      [["create-user", "--email", uniqueEmail()], "MISSING_REQUIRED_PARAMETER"],
      [["create-project", "--email", "nobody@example.com", "--name", "X"], "RESOURCE_NOT_FOUND"],
      [["reset-key", "--project", "prj_doesnotexist"], "RESOURCE_NOT_FOUND"],
      [["set-plan", "--project", "prj_doesnotexist", "--plan", "GOLD"], "INVALID_PARAMETER"],
    ];
    for (const [args, code] of cases) {
      const r = await admin(...args);
      expect(r.code, args.join(" ")).not.toBe(0);
      expect((r.json as { error: { code: string } }).error.code, args.join(" ")).toBe(code);
    }
    const email = uniqueEmail("dup");
    expect((await admin("create-user", "--email", email, "--password", "a-long-password")).code).toBe(0);
    const dup = await admin("create-user", "--email", email.toUpperCase(), "--password", "a-long-password");
    expect((dup.json as { error: { code: string } }).error.code).toBe("RESOURCE_ALREADY_EXISTS");
    expect(await db().user.count()).toBe(before + 1);
  });
});
