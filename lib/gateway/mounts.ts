import { families } from "@/lib/chains/registry";
import { webhookMount } from "@/lib/webhooks/endpoint";
import type { Mount } from "./types";

/** The public API: every chain family's mounts, and the webhook API. */
export function publicMounts(): readonly Mount[] {
  return [...families().flatMap((f) => f.mounts), webhookMount];
}
