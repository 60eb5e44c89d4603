"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useState } from "react";
import { api, errorMessage } from "@/components/api-client";
import { keyPath, secretQueryKey } from "./types";

/**
 * Fetches a key's secret through POST .../reveal, sharing the answer through the query cache
 * (so Reveal, Copy and the endpoint examples ask the server once).
 */
export function useKeySecret(projectId: string, keyId: string | undefined): () => Promise<string> {
  const queryClient = useQueryClient();
  return useCallback(() => {
    if (!keyId) return Promise.reject(new Error("no key"));
    return queryClient.fetchQuery({
      queryKey: secretQueryKey(projectId, keyId),
      queryFn: async () => (await api<{ apiKey: string }>(`${keyPath(projectId, keyId)}/reveal`, { method: "POST" })).apiKey,
      staleTime: 60_000,
      gcTime: 5 * 60_000,
    });
  }, [queryClient, projectId, keyId]);
}

export interface RevealedKey {
  /** The full secret while revealed, else null. */
  revealed: string | null;
  setRevealed(secret: string | null): void;
  pending: boolean;
  error: string | null;
  setError(error: string | null): void;
  reveal(): Promise<void>;
  /** The full secret, fetched if needed, without revealing it on screen. */
  getSecret(): Promise<string>;
}

/** Reveal/hide state of one key, with its loading and error states. */
export function useRevealedKey(projectId: string, keyId: string | undefined): RevealedKey {
  const getSecret = useKeySecret(projectId, keyId);
  const [revealed, setRevealed] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const reveal = useCallback(async () => {
    setPending(true);
    setError(null);
    try {
      setRevealed(await getSecret());
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setPending(false);
    }
  }, [getSecret]);
  return { revealed, setRevealed, pending, error, setError, reveal, getSecret };
}
