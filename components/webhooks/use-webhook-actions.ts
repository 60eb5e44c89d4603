"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api } from "@/components/api-client";
import { inboxesPath, inboxesQueryKey, webhookPath, webhooksQueryKey, type InboxSummary } from "./types";

/** Creates a test inbox; its URL is in this answer only. */
export function useCreateInbox(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api<InboxSummary & { url: string }>(inboxesPath(projectId), { method: "POST" }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: inboxesQueryKey(projectId) }),
  });
}

/** Sends a sample message of the subscription's kind now. */
export function useSendTest(projectId: string, subscriptionId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api<{ result: true; messageId: string }>(`${webhookPath(projectId, subscriptionId)}/test`, { method: "POST" }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: webhooksQueryKey(projectId) }),
  });
}
