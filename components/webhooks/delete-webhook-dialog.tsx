"use client";

import { useQueryClient } from "@tanstack/react-query";
import { api } from "@/components/api-client";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { webhookPath, webhooksListQueryKey } from "./types";

/** Confirms a deletion: the subscription goes with its messages and delivery history. */
export function DeleteWebhookDialog({
  open,
  projectId,
  item,
  onClose,
  onDeleted,
}: {
  open: boolean;
  projectId: string;
  item: { subscriptionId: string; description: string };
  onClose: () => void;
  onDeleted: () => void;
}) {
  const queryClient = useQueryClient();
  return (
    <ConfirmDialog
      open={open}
      onClose={onClose}
      title={`Delete “${item.description}”?`}
      description="Deliveries stop at once, and the webhook's messages and delivery history are deleted with it. This cannot be undone."
      confirmLabel="Delete webhook"
      action={() => api(webhookPath(projectId, item.subscriptionId), { method: "DELETE" })}
      onDone={async () => {
        onDeleted();
        // Only the list: the deleted webhook's own queries would answer 404.
        await queryClient.invalidateQueries({ queryKey: webhooksListQueryKey(projectId) });
      }}
    />
  );
}
