import { z } from "zod";
import { createUser } from "@/lib/auth/users";
import { db, disconnectDb } from "@/lib/db/client";
import { ensureDatabase } from "@/lib/db/connection";
import { applyMigrations } from "@/lib/db/migrate";
import { Plan } from "@/lib/db/generated/enums";
import { loadEnv, setDatabaseUrl } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { resetKey } from "@/lib/keys/service";
import { planFromName, PLANS } from "@/lib/plans";
import { setPlanAsAdmin } from "@/lib/projects/plan";
import { projectName } from "@/lib/projects/schema";
import { createProject, listProjects } from "@/lib/projects/service";
import { FIELDS, parseInput, type Wording } from "@/lib/validation";

export const ADMIN_USAGE = `Usage: npm run admin -- <command> [options]
  create-user    --email E --password P
  create-project --email E --name N      (prints projectId and apiKey)
  list-projects  --email E
  reset-key      --project ID             (prints the new apiKey)
  set-plan       --project ID --plan ${Object.keys(Plan).join("|")} (or the plan's label, any case)`;

/** Options named as they are typed: `--name: Use at most 64 characters`. */
const OPTIONS: Wording = { ...FIELDS, problem: (path, message) => `--${path}: ${message}` };

function required(values: Record<string, string | undefined>, name: string): string {
  const v = values[name];
  if (v === undefined || v === "") throw new AppError("MISSING_REQUIRED_PARAMETER", `--${name} is required.\n${ADMIN_USAGE}`);
  return v;
}

async function userIdByEmail(email: string): Promise<string> {
  const user = await db().user.findUnique({ where: { email: email.trim().toLowerCase() }, select: { id: true } });
  if (!user) throw new AppError("RESOURCE_NOT_FOUND", `No user with email ${email}.`);
  return user.id;
}

async function execute(command: string | undefined, values: Record<string, string | undefined>): Promise<unknown> {
  switch (command) {
    case "create-user": {
      const user = await createUser({ email: required(values, "email"), password: required(values, "password") });
      return { userId: user.id, email: user.email };
    }
    case "create-project": {
      const { name } = parseInput(z.object({ name: projectName }), { name: required(values, "name") }, OPTIONS);
      const { projectId, apiKey } = await createProject(await userIdByEmail(required(values, "email")), name);
      return { projectId, apiKey };
    }
    case "list-projects": {
      const projects = await listProjects(await userIdByEmail(required(values, "email")));
      return projects.map((p) => ({ projectId: p.id, name: p.name, plan: p.plan, createdAt: p.createdAt.toISOString() }));
    }
    case "reset-key": {
      const projectId = required(values, "project");
      const key = await db().apiKey.findFirst({ where: { projectId, revokedAt: null }, select: { id: true }, orderBy: { createdAt: "asc" } });
      if (!key) throw new AppError("RESOURCE_NOT_FOUND", `No project ${projectId} (or it has no key).`);
      return { projectId, keyId: key.id, apiKey: await resetKey(projectId, key.id) };
    }
    case "set-plan": {
      const projectId = required(values, "project");
      const plan = planFromName(required(values, "plan"));
      if (!plan) throw new AppError("INVALID_PARAMETER", `--plan must name a plan, by id or label in any case: ${Object.entries(PLANS).map(([id, p]) => `${id} (${p.label})`).join(", ")}.`);
      if (!(await setPlanAsAdmin(projectId, plan))) throw new AppError("RESOURCE_NOT_FOUND", `No project ${projectId}.`);
      return { projectId, plan };
    }
    default:
      throw new AppError("INVALID_PARAMETER", command ? `Unknown command "${command}".\n${ADMIN_USAGE}` : ADMIN_USAGE);
  }
}

/** Runs one admin command against the configured database (embedded when DATABASE_URL is unset). */
export async function runAdmin(command: string | undefined, values: Record<string, string | undefined>): Promise<unknown> {
  loadEnv();
  const database = await ensureDatabase({ log: (m) => process.stderr.write(m + "\n") });
  setDatabaseUrl(database.url);
  try {
    await applyMigrations(database.url);
    return await execute(command, values);
  } finally {
    await disconnectDb().catch(() => undefined);
    await database.stop();
  }
}
