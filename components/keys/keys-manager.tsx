"use client";

import { useQuery } from "@tanstack/react-query";
import { api } from "@/components/api-client";
import { Card, CardHeader } from "@/components/ui/card";
import { ListTable } from "@/components/ui/list-state";
import { CreateKeyForm } from "./create-key-form";
import { KeyRow } from "./key-row";
import { keysQueryKey, type KeyItem } from "./types";

export function KeysManager({ projectId, planLabel, maxKeys }: { projectId: string; planLabel: string; maxKeys: number }) {
  const keys = useQuery({
    queryKey: keysQueryKey(projectId),
    queryFn: ({ signal }) => api<{ items: KeyItem[] }>(`/api/projects/${encodeURIComponent(projectId)}/keys`, { signal }).then((r) => r.items),
  });

  return (
    <div className="space-y-8">
      <Card aria-labelledby="keys-title">
        <CardHeader
          titleId="keys-title"
          title="API keys"
          description={`${keys.data ? `${keys.data.length} of ${maxKeys} in use. ` : ""}The ${planLabel} plan includes ${maxKeys === 1 ? "one key" : `up to ${maxKeys} keys`}. Every key works on every network; Edit a key to rename it, limit it to your origins and addresses, or revoke it.`}
        />
        <ListTable
          query={keys}
          noun="keys"
          columns={["Key", "Created", "Last used"]}
          actionsLabel="Actions"
          // Positioned, so the header's visually hidden "Actions" label (absolutely placed) stays
          // inside the table's horizontal scroll instead of widening the page on a phone.
          className="relative min-w-[40rem]"
          items={keys.data}
          empty="No keys yet. Create one below."
        >
          {keys.data?.map((k) => <KeyRow key={k.id} projectId={projectId} item={k} canRevoke={keys.data.length > 1} />)}
        </ListTable>
      </Card>
      <CreateKeyForm projectId={projectId} />
    </div>
  );
}
