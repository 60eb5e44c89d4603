"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, errorMessage } from "@/components/api-client";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
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
  const remove = useMutation({
    mutationFn: () => api(webhookPath(projectId, item.subscriptionId), { method: "DELETE" }),
    onSuccess: async () => {
      onDeleted();
      // Only the list: the deleted webhook's own queries would answer 404.
      await queryClient.invalidateQueries({ queryKey: webhooksListQueryKey(projectId) });
    },
  });

  function close() {
    remove.reset();
    onClose();
  }

  return (
    <Dialog
      open={open}
      onClose={close}
      busy={remove.isPending}
      title={`Delete “${item.description}”?`}
      description="Deliveries stop at once, and the webhook's messages and delivery history are deleted with it. This cannot be undone."
    >
      <div className="space-y-4">
        {remove.isError ? <FormError>{errorMessage(remove.error)}</FormError> : null}
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close} disabled={remove.isPending} data-autofocus>
            Cancel
          </Button>
          <Button variant="danger" onClick={() => remove.mutate()} pending={remove.isPending}>
            Delete webhook
          </Button>
        </div>
      </div>
    </Dialog>
  );
}
