"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { api } from "@/components/api-client";
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
