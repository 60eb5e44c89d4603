"use server";

import { failure, ok, type ActionResult } from "@/components/action-result";
import { currentUser } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { createAdditionalKey } from "@/lib/keys/service";
import { createKeySchema } from "./types";

/**
 * Creates a key (the same service call as POST /api/projects/:id/keys). The plan limit comes
 * back as a REJECTED result with the server's upgrade message, not as an HTTP 409.
 */
export async function createKeyAction(projectId: string, input: { name: string }): Promise<ActionResult<{ id: string; apiKey: string }>> {
  const user = await currentUser();
  if (!user) return failure(new AppError("NO_AUTHENTICATION_FOUND", "Sign in to continue."));
  const parsed = createKeySchema.safeParse(input);
  if (!parsed.success) return { ...failure(new AppError("INVALID_PARAMETER", parsed.error.issues[0]?.message ?? "Invalid name")), field: "name" };
  try {
    return ok(await createAdditionalKey(user.id, String(projectId), parsed.data.name));
  } catch (e) {
    return failure(e);
  }
}
