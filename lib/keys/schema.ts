import { z } from "zod";
import { singleLine } from "@/lib/projects/schema";

export { allowlistSchema, MAX_ALLOWLIST_ENTRIES } from "./allowlist";

const keyName = singleLine(z.string({ error: "Enter a key name" }).trim().min(1, "Enter a key name").max(64, "Use at most 64 characters"));

/** Shared by the create-key form and its server action. */
export const createKeySchema = z.object({ name: keyName });

/** PATCH /api/projects/:id/keys/:keyId: a new name. */
export const renameKeySchema = z.object({ name: keyName });
