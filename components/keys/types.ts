/** A key as the console API returns it (dates as ISO strings). */
export interface KeyItem {
  id: string;
  name: string;
  masked: string;
  createdAt: string;
  resetAt: string | null;
}

export const keysQueryKey = (projectId: string) => ["keys", projectId] as const;
export const secretQueryKey = (projectId: string, keyId: string) => ["key-secret", projectId, keyId] as const;

export const keyPath = (projectId: string, keyId: string) =>
  `/api/projects/${encodeURIComponent(projectId)}/keys/${encodeURIComponent(keyId)}`;

export { createKeySchema } from "@/lib/keys/schema";
