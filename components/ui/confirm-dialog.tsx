"use client";

import { useMutation } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { errorMessage } from "@/components/api-client";
import { FormError } from "./alert";
import { Button } from "./button";
import { Dialog } from "./dialog";

/**
 * Asks before a destructive action. Cancel takes the focus first (the safe choice); the dialog
 * stays open while the action runs and shows its error in place; on success `onDone` gets the
 * action's result and the dialog closes.
 */
export function ConfirmDialog<T>({
  open,
  onClose,
  title,
  description,
  confirmLabel,
  action,
  onDone,
}: {
  open: boolean;
  onClose: () => void;
  /** The dialog's accessible name. */
  title: string;
  description: ReactNode;
  confirmLabel: string;
  action: () => Promise<T>;
  onDone?: (result: T) => unknown;
}) {
  const run = useMutation({
    mutationFn: action,
    onSuccess: async (result) => {
      close();
      await onDone?.(result);
    },
  });

  function close() {
    run.reset();
    onClose();
  }

  return (
    <Dialog open={open} onClose={close} busy={run.isPending} title={title} description={description}>
      <div className="space-y-4">
        {run.isError ? <FormError>{errorMessage(run.error)}</FormError> : null}
        <div className="flex justify-end gap-2">
          <Button variant="secondary" onClick={close} disabled={run.isPending} data-autofocus>
            Cancel
          </Button>
          <Button variant="danger" onClick={() => run.mutate()} pending={run.isPending}>
            {confirmLabel}
          </Button>
        </div>
      </div>
    </Dialog>
  );
}
