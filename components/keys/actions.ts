"use server";

import { failure, ok, type ActionResult } from "@/components/action-result";
import { currentUser } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { createAdditionalKey } from "@/lib/keys/service";
import { parseInput } from "@/lib/validation";
import { createKeySchema } from "./types";

/**
 * Creates a key: the console's one way to (the Keys page's form). A server action rather than a
 * route, so that the plan's limit comes back as a REJECTED result with the server's upgrade
 * message, not as an HTTP 409 the browser would log as a failed request.
 */
export async function createKeyAction(projectId: string, input: { name: string }): Promise<ActionResult<{ id: string; apiKey: string }>> {
  const user = await currentUser();
  if (!user) return failure(new AppError("NO_AUTHENTICATION_FOUND", "Sign in to continue."));
  try {
    const { name } = parseInput(createKeySchema, input);
    return ok(await createAdditionalKey(user.id, String(projectId), name));
  } catch (e) {
    return failure(e);
  }
}
