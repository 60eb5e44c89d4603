/** A key as the console API returns it (dates as ISO strings). */
export interface KeyItem {
  id: string;
  name: string;
  masked: string;
  createdAt: string;
  resetAt: string | null;
  /** Last request with the key (to within a few seconds); null: never used. */
  lastUsedAt: string | null;
  allowedOrigins: string[];
  allowedIps: string[];
}

export const keysQueryKey = (projectId: string) => ["keys", projectId] as const;
export const secretQueryKey = (projectId: string, keyId: string) => ["key-secret", projectId, keyId] as const;

export const keyPath = (projectId: string, keyId: string) =>
  `/api/projects/${encodeURIComponent(projectId)}/keys/${encodeURIComponent(keyId)}`;

export { allowlistSchema, createKeySchema, MAX_ALLOWLIST_ENTRIES, renameKeySchema } from "@/lib/keys/schema";
