"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import { useState, type FormEvent } from "react";
import { useForm } from "react-hook-form";
import { errorMessage, fieldOf } from "@/components/api-client";
import { FormError, FormSuccess } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { describedBy, Field } from "@/components/ui/field";
import { controlClasses, Input } from "@/components/ui/input";
import { normalizeAddress, normalizeOrigin } from "@/lib/keys/allowlist";
import { RevokeKeyDialog } from "./key-dialogs";
import { MAX_ALLOWLIST_ENTRIES, renameKeySchema, type KeyItem } from "./types";
import { useRenameKey, useSaveAllowlists } from "./use-key-actions";

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

type Props = { projectId: string; item: KeyItem };

/** The key's name, checked with the server's schema before it is sent. */
function RenameForm({ projectId, item, id }: Props & { id: (s: string) => string }) {
  const rename = useRenameKey(projectId, item.id);
  const {
    register,
    handleSubmit,
    setError,
    formState: { errors },
  } = useForm({ resolver: zodResolver(renameKeySchema), defaultValues: { name: item.name } });
  const onSubmit = handleSubmit(({ name }) =>
    rename.mutate(name, { onError: (e) => setError("name", { message: fieldOf(e)?.message ?? errorMessage(e) }, { shouldFocus: true }) }),
  );
  const nameError = errors.name?.message;

  return (
    <form onSubmit={onSubmit} noValidate className="space-y-2">
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <div className="flex-1">
          <Field id={id("name")} label="Key name" error={nameError}>
            <Input autoComplete="off" {...describedBy(id("name"), nameError)} {...register("name")} />
          </Field>
        </div>
        <Button type="submit" variant="secondary" pending={rename.isPending} className="sm:mt-[1.625rem]">
          Rename
        </Button>
      </div>
      <FormSuccess>{rename.isSuccess ? `Key renamed to “${rename.data.name}”.` : null}</FormSuccess>
    </form>
  );
}

/** One allowlist: a textarea of entries, its hint, and the first bad entry. */
function ListField({ id, label, hint, error, value, onChange, placeholder }: { id: string; label: string; hint: string; error: string | undefined; value: string; onChange: (value: string) => void; placeholder: string }) {
  return (
    <Field id={id} label={label} hint={hint} error={error}>
      <textarea
        className={cn(controlClasses, "min-h-28 py-2 font-mono text-[13px]")}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        placeholder={placeholder}
        spellCheck={false}
        {...describedBy(id, error, true)}
      />
    </Field>
  );
}

/** The origin and address allowlists, checked line by line as the gateway reads them. */
function AllowlistForm({ projectId, item, id }: Props & { id: (s: string) => string }) {
  const save = useSaveAllowlists(projectId, item.id);
  const [origins, setOrigins] = useState(item.allowedOrigins.join("\n"));
  const [ips, setIps] = useState(item.allowedIps.join("\n"));
  const [checked, setChecked] = useState(false);
  const originsError = checked ? listError(origins, normalizeOrigin, "origins") : undefined;
  const ipsError = checked ? listError(ips, normalizeAddress, "addresses") : undefined;
  function onSave(e: FormEvent) {
    e.preventDefault();
    setChecked(true);
    if (listError(origins, normalizeOrigin, "origins") || listError(ips, normalizeAddress, "addresses")) return;
    save.mutate(
      { origins: entriesOf(origins), ips: entriesOf(ips) },
      {
        onSuccess: (saved) => {
          setOrigins(saved.allowedOrigins.join("\n"));
          setIps(saved.allowedIps.join("\n"));
          setChecked(false);
        },
      },
    );
  }
  return (
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
        <ListField
          id={id("origins")}
          label="Allowed origins"
          hint="Matched against the Origin header that browsers send: app.example.com, https://app.example.com, *.example.com. Requests without an Origin header are refused."
          error={originsError}
          value={origins}
          onChange={(v) => {
            setOrigins(v);
            save.reset();
          }}
          placeholder={"https://app.example.com\n*.example.com"}
        />
        <ListField
          id={id("ips")}
          label="Allowed IP addresses and CIDR ranges"
          hint="IPv4 or IPv6: 203.0.113.7, 198.51.100.0/24, 2001:db8::/32."
          error={ipsError}
          value={ips}
          onChange={(v) => {
            setIps(v);
            save.reset();
          }}
          placeholder={"203.0.113.7\n2001:db8::/32"}
        />
      </div>
      {save.isError ? <FormError>{errorMessage(save.error)}</FormError> : null}
      <FormSuccess>{save.isSuccess ? "Allowlists saved. They apply to the next request." : null}</FormSuccess>
      <Button type="submit" variant="secondary" pending={save.isPending}>
        Save allowlists
      </Button>
    </form>
  );
}

/** Rename, allowlists and revocation of one key, shown under its row. */
export function KeySettings({ projectId, item, canRevoke }: Props & { canRevoke: boolean }) {
  const id = (s: string) => `key-${item.id}-${s}`;
  const [revokeOpen, setRevokeOpen] = useState(false);

  return (
    <div className="mx-5 mb-4 space-y-6 rounded-md border border-line bg-subtle/40 p-4" id={id("settings")}>
      <RenameForm projectId={projectId} item={item} id={id} />
      <AllowlistForm projectId={projectId} item={item} id={id} />
      <div className="flex flex-wrap items-center justify-between gap-3 border-t border-line pt-4">
        <p className="text-xs text-muted">
          {canRevoke ? "Revoking refuses every request with this key from now on." : "A project keeps at least one key: create another before revoking this one, or reset it."}
        </p>
        <Button variant="danger" size="sm" disabled={!canRevoke} onClick={() => setRevokeOpen(true)}>
          Revoke key
        </Button>
      </div>
      {/* On success the key leaves the list. */}
      <RevokeKeyDialog open={revokeOpen} projectId={projectId} item={item} onClose={() => setRevokeOpen(false)} />
    </div>
  );
}
