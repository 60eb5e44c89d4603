"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { api, errorMessage, fieldOf } from "@/components/api-client";
import { FormError, FormSuccess } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { describedBy, Field } from "@/components/ui/field";
import { controlClasses, Input } from "@/components/ui/input";
import { normalizeAddress, normalizeOrigin } from "@/lib/keys/allowlist";
import { keyPath, keysQueryKey, MAX_ALLOWLIST_ENTRIES, renameKeySchema, secretQueryKey, type KeyItem } from "./types";

/**
 * The entries of a textarea: one per line, or separated by commas. Not by spaces: a space inside
 * an entry is a typo (`http://exa mple.com`) to report, not two entries to save.
 */
const entriesOf = (text: string) =>
  text
    .split(/[\n,]+/)
    .map((e) => e.trim())
    .filter(Boolean);

/** The first problem in a list, named by its line, or undefined. */
function listError(text: string, normalize: (s: string) => { value: string } | { error: string }, plural: string): string | undefined {
  const distinct = new Set<string>();
  for (const entry of entriesOf(text)) {
    const r = normalize(entry);
    if ("error" in r) return r.error;
    distinct.add(r.value);
  }
  if (distinct.size > MAX_ALLOWLIST_ENTRIES) return `A key allows at most ${MAX_ALLOWLIST_ENTRIES} ${plural}; this list has ${distinct.size}.`;
  return undefined;
}

/** Rename, allowlists and revocation of one key, shown under its row. */
export function KeySettings({ projectId, item, canRevoke }: { projectId: string; item: KeyItem; canRevoke: boolean }) {
  const queryClient = useQueryClient();
  const refresh = () => void queryClient.invalidateQueries({ queryKey: keysQueryKey(projectId) });
  const id = (s: string) => `key-${item.id}-${s}`;

  const [name, setName] = useState(item.name);
  const [nameError, setNameError] = useState<string | undefined>();
  const rename = useMutation({
    mutationFn: (next: string) => api<KeyItem>(keyPath(projectId, item.id), { method: "PATCH", body: { name: next } }),
    onSuccess: refresh,
    onError: (e) => setNameError(fieldOf(e)?.message ?? errorMessage(e)),
  });
  function onRename(e: FormEvent) {
    e.preventDefault();
    const parsed = renameKeySchema.safeParse({ name });
    if (!parsed.success) return setNameError(parsed.error.issues[0]?.message);
    setNameError(undefined);
    rename.mutate(parsed.data.name);
  }

  const [origins, setOrigins] = useState(item.allowedOrigins.join("\n"));
  const [ips, setIps] = useState(item.allowedIps.join("\n"));
  const [checked, setChecked] = useState(false);
  const originsError = checked ? listError(origins, normalizeOrigin, "origins") : undefined;
  const ipsError = checked ? listError(ips, normalizeAddress, "addresses") : undefined;
  const save = useMutation({
    mutationFn: (lists: { origins: string[]; ips: string[] }) => api<KeyItem>(`${keyPath(projectId, item.id)}/allowlist`, { method: "PUT", body: lists }),
    onSuccess: (saved) => {
      setOrigins(saved.allowedOrigins.join("\n"));
      setIps(saved.allowedIps.join("\n"));
      setChecked(false);
      refresh();
    },
  });
  function onSave(e: FormEvent) {
    e.preventDefault();
    setChecked(true);
    if (listError(origins, normalizeOrigin, "origins") || listError(ips, normalizeAddress, "addresses")) return;
    save.mutate({ origins: entriesOf(origins), ips: entriesOf(ips) });
  }

  const [revokeOpen, setRevokeOpen] = useState(false);
  const textarea = cn(controlClasses, "min-h-28 py-2 font-mono text-[13px]");

  return (
    <div className="mx-5 mb-4 space-y-6 rounded-md border border-line bg-subtle/40 p-4" id={id("settings")}>
      <form onSubmit={onRename} noValidate className="space-y-2">
        <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
          <div className="flex-1">
            <Field id={id("name")} label="Key name" error={nameError}>
              <Input value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" {...describedBy(id("name"), nameError)} />
            </Field>
          </div>
          <Button type="submit" variant="secondary" pending={rename.isPending} className="sm:mt-[1.625rem]">
            Rename
          </Button>
        </div>
        <FormSuccess>{rename.isSuccess ? `Key renamed to “${rename.data.name}”.` : null}</FormSuccess>
      </form>

      <form onSubmit={onSave} noValidate className="space-y-4" aria-labelledby={id("allow-title")}>
        <div>
          <h3 id={id("allow-title")} className="text-sm font-medium text-fg">
            Allowlists
          </h3>
          <p className="text-xs text-muted">
            Empty lists allow every request. With entries, the gateway refuses other requests with 403 PERMISSION_DENIED. Up to{" "}
            {MAX_ALLOWLIST_ENTRIES} of each, one per line (or separated by commas).
          </p>
        </div>
        <div className="grid gap-4 md:grid-cols-2">
          <Field
            id={id("origins")}
            label="Allowed origins"
            hint="Matched against the Origin header that browsers send: app.example.com, https://app.example.com, *.example.com. Requests without an Origin header are refused."
            error={originsError}
          >
            <textarea
              className={textarea}
              value={origins}
              onChange={(e) => {
                setOrigins(e.target.value);
                save.reset();
              }}
              placeholder={"https://app.example.com\n*.example.com"}
              spellCheck={false}
              {...describedBy(id("origins"), originsError, true)}
            />
          </Field>
          <Field
            id={id("ips")}
            label="Allowed IP addresses and CIDR ranges"
            hint="IPv4 or IPv6: 203.0.113.7, 198.51.100.0/24, 2001:db8::/32."
            error={ipsError}
          >
            <textarea
              className={textarea}
              value={ips}
              onChange={(e) => {
                setIps(e.target.value);
                save.reset();
              }}
              placeholder={"203.0.113.7\n2001:db8::/32"}
              spellCheck={false}
              {...describedBy(id("ips"), ipsError, true)}
            />
          </Field>
        </div>
        {save.isError ? <FormError>{errorMessage(save.error)}</FormError> : null}
        <FormSuccess>{save.isSuccess ? "Allowlists saved. They apply to the next request." : null}</FormSuccess>
        <Button type="submit" variant="secondary" pending={save.isPending}>
          Save allowlists
        </Button>
      </form>

      <div className="flex flex-wrap items-center justify-between gap-3 border-t border-line pt-4">
        <p className="text-xs text-muted">
          {canRevoke ? "Revoking refuses every request with this key from now on." : "A project keeps at least one key: create another before revoking this one, or reset it."}
        </p>
        <Button variant="danger" size="sm" disabled={!canRevoke} onClick={() => setRevokeOpen(true)}>
          Revoke key
        </Button>
      </div>
      {/* On success the key leaves the list. */}
      <ConfirmDialog
        open={revokeOpen}
        onClose={() => setRevokeOpen(false)}
        title={`Revoke “${item.name}”?`}
        description={
          <>
            <code className="text-fg">{item.masked}</code> stops working immediately and for good: every request with it is refused. This
            cannot be undone; its usage stays in your charts.
          </>
        }
        confirmLabel="Revoke key"
        action={() => api<void>(keyPath(projectId, item.id), { method: "DELETE" })}
        onDone={() => {
          queryClient.removeQueries({ queryKey: secretQueryKey(projectId, item.id) });
          refresh();
        }}
      />
    </div>
  );
}
