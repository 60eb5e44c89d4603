"use client";

import { useMutation } from "@tanstack/react-query";
import { api, errorMessage } from "@/components/api-client";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { keyPath, type KeyItem } from "./types";

/**
 * Confirms a reset. On success it closes and hands the new secret to the row, which shows it
 * (with Copy) in place of the masked key.
 */
export function ResetKeyDialog({
  open,
  projectId,
  item,
  onClose,
  onReset,
}: {
  open: boolean;
  projectId: string;
  item: KeyItem;
  onClose: () => void;
  onReset: (secret: string) => void;
}) {
  const reset = useMutation({
    mutationFn: () => api<{ apiKey: string }>(`${keyPath(projectId, item.id)}/reset`, { method: "POST" }).then((r) => r.apiKey),
    onSuccess: (apiKey) => {
      onReset(apiKey);
      close();
    },
  });

  function close() {
    reset.reset();
    onClose();
  }

  return (
    <Dialog
      open={open}
      onClose={close}
      busy={reset.isPending}
      title={`Reset “${item.name}”?`}
      description={
        <>
          A new secret replaces <code className="text-fg">{item.masked}</code>. The old key stops working immediately: every
          application that uses it gets authentication errors until you update it.
        </>
      }
    >
      <div className="space-y-4">
        {reset.isError ? <FormError>{errorMessage(reset.error)}</FormError> : null}
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close} disabled={reset.isPending} data-autofocus>
            Cancel
          </Button>
          <Button variant="danger" onClick={() => reset.mutate()} pending={reset.isPending}>
            Reset key
          </Button>
        </div>
      </div>
    </Dialog>
  );
}
