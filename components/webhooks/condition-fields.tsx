"use client";

import { useState } from "react";
import { useWatch, type UseFormReturn } from "react-hook-form";
import { Badge } from "@/components/ui/badge";
import { describedBy, Field } from "@/components/ui/field";
import { controlClasses, Input } from "@/components/ui/input";
import { cn } from "@/components/ui/cn";
import { clientFamily } from "@/lib/chains/client";
import { EVENT_DATA_MAX_BYTES, EVENT_DATA_MAX_DEPTH, PERIOD_MAX } from "@/lib/webhooks/schema";
import { parseEventSignature, topicSupported, valueToTopic, type ParsedEvent } from "./event-signature";
import type { WebhookFormValues } from "./form";

/** The builder and edit forms differ only in what they submit. */
type Form<T> = UseFormReturn<WebhookFormValues, unknown, T>;

/** The condition of the form's eventType: LOG, BLOCK_PERIOD or TRANSACTION fields. */
export function ConditionFields<T>({ form, idPrefix }: { form: Form<T>; idPrefix: string }) {
  const eventType = useWatch({ control: form.control, name: "eventType" });
  if (eventType === "LOG") return <LogFields form={form} idPrefix={idPrefix} />;
  if (eventType === "BLOCK_PERIOD") return <PeriodField form={form} idPrefix={idPrefix} />;
  return <TransactionFields form={form} idPrefix={idPrefix} />;
}

function PeriodField<T>({ form, idPrefix }: { form: Form<T>; idPrefix: string }) {
  const id = `${idPrefix}-period`;
  const error = form.formState.errors.condition?.period?.message;
  return (
    <Field id={id} label="Period (blocks)" hint={`One message on the first block after creation, then every this many blocks: 1 sends every block, up to ${PERIOD_MAX.toLocaleString("en-US")}.`} error={error}>
      <Input inputMode="numeric" autoComplete="off" placeholder="10" className="max-w-48" {...describedBy(id, error, true)} {...form.register("condition.period")} />
    </Field>
  );
}

const TOPIC_LABELS = ["Topic 0 (event signature hash)", "Topic 1", "Topic 2", "Topic 3"] as const;

function LogFields<T>({ form, idPrefix }: { form: Form<T>; idPrefix: string }) {
  const errors = form.formState.errors.condition;
  const addressId = `${idPrefix}-address`;
  return (
    <div className="space-y-5">
      <Field id={addressId} label="Contract address" hint="The contract that emits the logs: 0x followed by 40 hex digits." error={errors?.address?.message}>
        <Input
          autoComplete="off"
          spellCheck={false}
          placeholder="0x5fbdb2315678afecb367f032d93f642f64180aa3"
          className="font-mono"
          {...describedBy(addressId, errors?.address?.message, true)}
          {...form.register("condition.address")}
        />
      </Field>
      <SignatureHelper form={form} idPrefix={idPrefix} />
      <fieldset className="space-y-3">
        <legend className="text-sm font-medium text-fg">Topics</legend>
        <p className="text-xs text-muted">
          Topic 0 is required. Topics 1 to 3 are the indexed parameters, 32 bytes each; leave one empty to match any value.
        </p>
        {TOPIC_LABELS.map((label, i) => {
          const id = `${idPrefix}-topic-${i}`;
          const error = errors?.topics?.[i]?.message ?? (i === 0 ? errors?.topics?.message : undefined);
          return (
            <Field key={id} id={id} label={label} error={error}>
              <Input
                autoComplete="off"
                spellCheck={false}
                placeholder={i === 0 ? "0x…" : "Any value"}
                className="font-mono text-[13px]"
                {...describedBy(id, error)}
                {...form.register(`condition.topics.${i as 0 | 1 | 2 | 3}`)}
              />
            </Field>
          );
        })}
      </fieldset>
    </div>
  );
}

/**
 * Computes topic 0 from an event signature and offers an input per indexed parameter; every
 * change writes the topics into the form (the topic fields stay editable).
 */
function SignatureHelper<T>({ form, idPrefix }: { form: Form<T>; idPrefix: string }) {
  const [signature, setSignature] = useState("");
  const [values, setValues] = useState<string[]>(["", "", ""]);
  const parsed = signature.trim() === "" ? null : parseEventSignature(signature);
  const event: ParsedEvent | null = parsed && "event" in parsed ? parsed.event : null;
  const sigId = `${idPrefix}-signature`;

  function apply(nextEvent: ParsedEvent | null, nextValues: string[]) {
    if (!nextEvent) return;
    const topics = ["", "", ""].map((_, i) => {
      const param = nextEvent.indexed[i];
      if (!param || !topicSupported(param.type)) return "";
      const t = valueToTopic(param.type, nextValues[i] ?? "");
      return "topic" in t && t.topic ? t.topic : "";
    });
    const opts = { shouldDirty: true, shouldValidate: form.formState.isSubmitted };
    form.setValue("condition.topics.0", nextEvent.topic0, opts);
    topics.forEach((t, i) => form.setValue(`condition.topics.${(i + 1) as 1 | 2 | 3}`, t, opts));
  }

  return (
    <div className="space-y-4 rounded-md border border-line bg-subtle/50 p-4">
      <Field
        id={sigId}
        label="Event signature helper"
        hint="Paste the event as declared in Solidity; topic 0 is its Keccak-256 hash, filled in below."
        error={parsed && "error" in parsed ? parsed.error : undefined}
      >
        <Input
          autoComplete="off"
          spellCheck={false}
          placeholder="Transfer(address indexed from, address indexed to, uint256 value)"
          className="font-mono text-[13px]"
          value={signature}
          onChange={(e) => {
            setSignature(e.target.value);
            const next = parseEventSignature(e.target.value);
            apply("event" in next ? next.event : null, values);
          }}
          {...describedBy(sigId, parsed && "error" in parsed ? parsed.error : undefined, true)}
        />
      </Field>
      {event ? (
        <div className="space-y-3 text-sm">
          <p className="text-muted">
            <span className="font-mono text-fg">{event.canonical}</span> → topic 0{" "}
            <code data-testid="topic0" className="font-mono text-xs break-all text-fg">
              {event.topic0}
            </code>
          </p>
          {event.indexed.length === 0 ? <p className="text-xs text-muted">This event has no indexed parameters: only topic 0 filters it.</p> : null}
          {event.indexed.map((p, i) => {
            const id = `${idPrefix}-indexed-${i}`;
            const result = topicSupported(p.type) ? valueToTopic(p.type, values[i] ?? "") : { error: `${p.type} values are hashed in a way this helper does not compute: enter topic ${p.topic} directly` };
            const error = "error" in result ? result.error.charAt(0).toUpperCase() + result.error.slice(1) : undefined;
            return (
              <Field
                key={id}
                id={id}
                label={
                  <>
                    {p.name} <span className="font-mono text-xs font-normal text-muted">({p.type}, topic {p.topic})</span>
                  </>
                }
                hint="Empty matches any value."
                error={error}
              >
                <Input
                  autoComplete="off"
                  spellCheck={false}
                  className="font-mono text-[13px]"
                  disabled={!topicSupported(p.type)}
                  placeholder={p.type === "address" ? "0x… (any)" : "Any"}
                  value={values[i] ?? ""}
                  onChange={(e) => {
                    const next = values.map((v, j) => (j === i ? e.target.value : v));
                    setValues(next);
                    apply(event, next);
                  }}
                  {...describedBy(id, error, true)}
                />
              </Field>
            );
          })}
        </div>
      ) : null}
    </div>
  );
}

function TransactionFields<T>({ form, idPrefix }: { form: Form<T>; idPrefix: string }) {
  const errors = form.formState.errors.condition;
  const text = (name: "payloadFunction" | "eventType" | "eventAccountAddress", label: string, hint: string, placeholder: string) => {
    const id = `${idPrefix}-${name}`;
    const error = errors?.[name]?.message;
    return (
      <Field id={id} label={label} hint={hint} error={error}>
        <Input autoComplete="off" spellCheck={false} placeholder={placeholder} className="font-mono text-[13px]" {...describedBy(id, error, true)} {...form.register(`condition.${name}`)} />
      </Field>
    );
  };
  const dataId = `${idPrefix}-eventData`;
  const dataError = errors?.eventData?.message;
  return (
    <div className="space-y-5">
      <ul className="list-disc space-y-1 rounded-md border border-line bg-subtle/50 py-3 pr-4 pl-8 text-xs text-muted">
        <li>Match by entry function, by event, or both.</li>
        <li>An event is named by its type and the account that emits it: give both or neither.</li>
        <li>Without an entry function, both event fields are required.</li>
        <li>Event data filters the data of that event, so it needs the event type.</li>
      </ul>
      {text("payloadFunction", "Entry function", "address::module::function, such as 0x1::aptos_account::transfer.", "0x1::aptos_account::transfer")}
      {text("eventType", "Event type", "address::module::Struct, with optional type arguments, such as 0x1::fungible_asset::Deposit.", "0x1::fungible_asset::Deposit")}
      {text("eventAccountAddress", "Event account address", "The account that emits the events: 0x followed by 1 to 64 hex digits; 0x0 for module events.", "0x0")}
      <Field
        id={dataId}
        label="Event data (JSON)"
        hint={`Optional. A JSON object of fields the event's data must hold with exactly these values; at most ${EVENT_DATA_MAX_DEPTH} levels deep and ${EVENT_DATA_MAX_BYTES.toLocaleString("en-US")} bytes.`}
        error={dataError}
      >
        <textarea
          rows={5}
          spellCheck={false}
          placeholder={'{ "amount": "100000000" }'}
          className={cn(controlClasses, "py-2 font-mono text-[13px]")}
          {...describedBy(dataId, dataError, true)}
          {...form.register("condition.eventData")}
        />
      </Field>
    </div>
  );
}

/** The isInstant checkbox, explained for the chosen network (on a chain final at commit it makes no difference). */
export function InstantField<T>({ form, idPrefix, finalityDepth, family }: { form: Form<T>; idPrefix: string; finalityDepth: number; family: string }) {
  const id = `${idPrefix}-isInstant`;
  const finalAtCommit = finalityDepth === 0;
  const chain = clientFamily(family)?.label ?? family;
  return (
    <div className="space-y-1.5">
      <div className="flex items-start gap-2.5">
        <input id={id} type="checkbox" className="mt-0.5 size-4 accent-accent" aria-describedby={`${id}-hint`} {...form.register("isInstant")} />
        <label htmlFor={id} className="text-sm font-medium text-fg">
          Deliver instantly
        </label>
        {finalAtCommit ? <Badge>No difference on {chain}</Badge> : null}
      </div>
      <p id={`${id}-hint`} className="pl-6.5 text-xs text-muted">
        {finalAtCommit
          ? `${chain} blocks are final as soon as they are committed, so messages go out at once either way.`
          : `Off (recommended): a message goes out once its block is final, ${finalityDepth} blocks deep on this network, so it never has to be taken back. On: it goes out as soon as the block is seen, seconds earlier; if that block is later replaced (a reorg), you receive the same logs again with "removed": true.`}
      </p>
    </div>
  );
}
