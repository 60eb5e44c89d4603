/**
 * Verification cache for API keys, keyed by the key's SHA-256, including "not found" answers,
 * so the hot path rarely touches the database. Lives on globalThis: the gateway and the
 * Next.js bundle in the same process share it, and a reset invalidates it at once.
 */
export interface KeyPrincipal {
  keyId: string;
  projectId: string;
  plan: string;
}

interface Entry {
  value: KeyPrincipal | null;
  expires: number;
}

const MAX_ENTRIES = 50_000;
const g = globalThis as unknown as { __blockgateKeyCache?: Map<string, Entry> };
const cache = (g.__blockgateKeyCache ??= new Map());

export function cacheGet(hash: string, now: number): KeyPrincipal | null | undefined {
  const entry = cache.get(hash);
  if (!entry) return undefined;
  if (entry.expires <= now) {
    cache.delete(hash);
    return undefined;
  }
  return entry.value;
}

export function cacheSet(hash: string, value: KeyPrincipal | null, ttlMs: number, now: number): void {
  if (ttlMs <= 0) return;
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.set(hash, { value, expires: now + ttlMs });
}

export function invalidateKey(hash: string): void {
  cache.delete(hash);
}

export function invalidateProject(projectId: string): void {
  for (const [hash, entry] of cache) if (entry.value?.projectId === projectId) cache.delete(hash);
}
