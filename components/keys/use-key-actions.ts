"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, ApiError, UNREACHABLE_MESSAGE } from "@/components/api-client";
import { createKeyAction } from "./actions";
import { keyPath, keysQueryKey, secretQueryKey, type KeyItem } from "./types";

const CREATE_FAILED = "Could not create the key. Please try again.";

/** A refusal of the create-key action, with the field it names ("name") when it names one. */
export class KeyActionError extends ApiError {
  constructor(
    code: string,
    message: string,
    readonly field?: string,
  ) {
    super(0, code, message);
  }
}

/**
 * Creates a key through the server action (the plan's limit comes back as a message, not as an
 * HTTP error); its secret is cached for Reveal and Copy, and the list refreshed.
 */
export function useCreateKey(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (name: string) => {
      const result = await createKeyAction(projectId, { name }).catch(() => {
        throw new KeyActionError("NETWORK_ERROR", UNREACHABLE_MESSAGE);
      });
      if (!result.ok) throw new KeyActionError(result.code, result.message || CREATE_FAILED, result.field);
      return result.data;
    },
    onSuccess: (created) => {
      queryClient.setQueryData(secretQueryKey(projectId, created.id), created.apiKey);
      void queryClient.invalidateQueries({ queryKey: keysQueryKey(projectId) });
    },
  });
}

/** Renames a key; the list shows the new name. */
export function useRenameKey(projectId: string, keyId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => api<KeyItem>(keyPath(projectId, keyId), { method: "PATCH", body: { name } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keysQueryKey(projectId) }),
  });
}

/** Replaces a key's allowlists; the answer holds them as stored (normalised). */
export function useSaveAllowlists(projectId: string, keyId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (lists: { origins: string[]; ips: string[] }) => api<KeyItem>(`${keyPath(projectId, keyId)}/allowlist`, { method: "PUT", body: lists }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keysQueryKey(projectId) }),
  });
}
