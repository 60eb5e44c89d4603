import { z } from "zod";
import { singleLine } from "@/lib/projects/schema";

/** Shared by the create-key form, its server action and POST /api/projects/:id/keys. */
export const createKeySchema = z.object({ name: singleLine(z.string().trim().min(1, "Enter a key name").max(64, "Use at most 64 characters")) });
