/**
 * Verification cache for API keys, including "not found" answers, so the hot path rarely touches
 * the database. Entries are reachable by the presented secret (no hashing on a hit) and by its
 * SHA-256 (for invalidation). Lives on globalThis: the gateway and the Next.js bundle in the same
 * process share it, and a reset invalidates it at once.
 */
export interface KeyPrincipal {
  keyId: string;
  projectId: string;
  plan: string;
}

interface Entry {
  hash: string;
  value: KeyPrincipal | null;
  expires: number;
}

const MAX_ENTRIES = 50_000;
const g = globalThis as unknown as { __blockgateKeyCache?: { bySecret: Map<string, Entry>; byHash: Map<string, Entry> } };
const { bySecret, byHash } = (g.__blockgateKeyCache ??= { bySecret: new Map(), byHash: new Map() });

/** The cached answer for a presented secret: a principal, null (known bad), or undefined (ask the database). */
export function cacheGet(secret: string, now: number): KeyPrincipal | null | undefined {
  const entry = bySecret.get(secret);
  if (!entry) return undefined;
  if (entry.expires <= now) {
    bySecret.delete(secret);
    if (byHash.get(entry.hash) === entry) byHash.delete(entry.hash);
    return undefined;
  }
  return entry.value;
}

export function cacheSet(secret: string, hash: string, value: KeyPrincipal | null, ttlMs: number, now: number): void {
  if (ttlMs <= 0) return;
  if (bySecret.size >= MAX_ENTRIES) {
    const [oldest, entry] = bySecret.entries().next().value as [string, Entry];
    bySecret.delete(oldest);
    if (byHash.get(entry.hash) === entry) byHash.delete(entry.hash);
  }
  const entry = { hash, value, expires: now + ttlMs };
  bySecret.set(secret, entry);
  byHash.set(hash, entry);
}

/** Drops a key (by the SHA-256 of its secret): the next request with it goes to the database. */
export function invalidateKey(hash: string): void {
  const entry = byHash.get(hash);
  if (entry) entry.expires = 0;
  byHash.delete(hash);
}
