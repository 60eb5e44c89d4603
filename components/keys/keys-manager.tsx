"use client";

import { useQuery } from "@tanstack/react-query";
import { api, errorMessage } from "@/components/api-client";
import { FormError } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card, CardHeader } from "@/components/ui/card";
import { Skeleton } from "@/components/ui/skeleton";
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
        <div className="overflow-x-auto">
          <table className="w-full min-w-[40rem] text-left text-sm">
            <thead className="border-b border-line bg-subtle/60 text-xs font-medium whitespace-nowrap text-muted">
              <tr>
                <th scope="col" className="px-5 py-2.5 font-medium">
                  Key
                </th>
                <th scope="col" className="px-3 py-2.5 font-medium">
                  Created
                </th>
                <th scope="col" className="px-3 py-2.5 font-medium">
                  Last used
                </th>
                <th scope="col" className="px-5 py-2.5 text-right font-medium">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            {keys.isPending ? (
              <tbody aria-busy="true">
                {[0, 1].map((i) => (
                  <tr key={i} className="border-t border-line first:border-t-0">
                    <td className="space-y-2 px-5 py-4">
                      <Skeleton className="h-4 w-28" />
                      <Skeleton className="h-4 w-44" />
                    </td>
                    <td className="px-3 py-4">
                      <Skeleton className="h-4 w-32" />
                    </td>
                    <td className="px-3 py-4">
                      <Skeleton className="h-4 w-24" />
                    </td>
                    <td className="px-5 py-4">
                      <Skeleton className="ml-auto h-8 w-52" />
                    </td>
                  </tr>
                ))}
              </tbody>
            ) : null}
            {keys.data?.map((k) => <KeyRow key={k.id} projectId={projectId} item={k} canRevoke={keys.data.length > 1} />)}
            {keys.data?.length === 0 ? (
              <tbody>
                <tr>
                  <td colSpan={4} className="px-5 py-8 text-center text-sm text-muted">
                    No keys yet. Create one below.
                  </td>
                </tr>
              </tbody>
            ) : null}
          </table>
        </div>
        {keys.isPending ? <span className="sr-only" role="status">Loading keys…</span> : null}
        {keys.isError ? (
          <div className="space-y-3 px-5 py-4">
            <FormError>Could not load the keys. {errorMessage(keys.error)}</FormError>
            <Button variant="secondary" size="sm" onClick={() => void keys.refetch()} pending={keys.isFetching}>
              Try again
            </Button>
          </div>
        ) : null}
      </Card>
      <CreateKeyForm projectId={projectId} />
    </div>
  );
}
