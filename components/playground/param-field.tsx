"use client";

import { useRef } from "react";
import { Button } from "@/components/ui/button";
import { Input, Select } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import type { FieldCheck, ParamExample } from "@/lib/chains/descriptor";
import type { ParamSpec } from "@/lib/consensus/catalog";
import type { QueryError } from "@/lib/consensus/query/parse";
import { queryExcerpt, typeSummary } from "./request";

export interface ParamFieldProps {
  /** id of the control; its hint, example and error ids derive from it. */
  id: string;
  spec: ParamSpec;
  value: string;
  check: FieldCheck;
  example: ParamExample | null;
  onChange: (value: string) => void;
  /** The type and limits in words, instead of the consensus catalog's (typeSummary). */
  summary?: string;
  /** The empty field's placeholder, instead of the one derived from the consensus catalog. */
  placeholder?: string;
}

const ErrorIcon = () => (
  <svg aria-hidden="true" viewBox="0 0 16 16" className="mt-px size-3.5 shrink-0" fill="currentColor">
    <path d="M8 1.5a6.5 6.5 0 1 0 0 13 6.5 6.5 0 0 0 0-13ZM7.25 4.75a.75.75 0 0 1 1.5 0v3.5a.75.75 0 0 1-1.5 0v-3.5ZM8 11.75a.9.9 0 1 1 0-1.8.9.9 0 0 1 0 1.8Z" />
  </svg>
);

/** The query as typed with the character at the error offset marked, and a caret under it. */
function QueryCaret({ query, error, onLocate }: { query: string; error: QueryError; onLocate: () => void }) {
  const { before, at, after, column } = queryExcerpt(query, error.offset);
  return (
    <div className="flex flex-wrap items-start gap-2">
      <div data-testid="query-caret" data-offset={error.offset} aria-hidden="true" className="min-w-0 flex-1 overflow-x-auto rounded-md border border-danger/30 bg-danger-soft px-3 py-2 font-mono text-[12.5px] leading-snug">
        <div className="whitespace-pre text-fg">
          {before}
          <mark className="rounded-sm bg-danger px-px text-white">{at || " "}</mark>
          {after}
        </div>
        <div className="whitespace-pre text-danger-text">
          {" ".repeat(column)}^ offset {error.offset}
        </div>
      </div>
      <Button variant="ghost" size="sm" onClick={onLocate}>
        Go to offset {error.offset}
      </Button>
    </div>
  );
}

function placeholderOf(spec: ParamSpec): string | undefined {
  if (spec.type === "height") return "latest";
  if (spec.type === "hash") return "64 hex digits";
  // "Query, for example tx.height = 5 or message.action = 'send'." → "tx.height = 5"
  if (spec.type === "query") return spec.description.replace(/^.*for example\s*/i, "").split(" or ")[0]?.replace(/\.$/, "");
  return spec.default !== undefined ? `${spec.default} (default)` : undefined;
}

/** The parameter's example from the chain, and a button that puts it in the field. */
function ExampleRow({ id, name, example, onUse }: { id: string; name: string; example: ParamExample; onUse: (value: string) => void }) {
  return (
    <div className="flex flex-wrap items-center gap-2 text-xs text-muted">
      <p id={id} className="min-w-0">
        Example ({example.description}): <code className="font-mono break-all text-fg">{example.value}</code>
      </p>
      <Button variant="secondary" size="sm" className="h-7" aria-label={`Use example ${name}`} onClick={() => onUse(example.value)}>
        Use example
      </Button>
    </div>
  );
}

/** One parameter of the catalog as a labelled control: its type decides the widget. */
export function ParamField({ id, spec, value, check, example, onChange, summary, placeholder }: ParamFieldProps) {
  const input = useRef<HTMLInputElement>(null);
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const exampleId = `${id}-example`;
  const error = check.error;
  const describedBy = [hintId, example ? exampleId : null, error ? errorId : null].filter(Boolean).join(" ");
  const common = {
    id,
    "aria-describedby": describedBy,
    "aria-invalid": error ? (true as const) : undefined,
    "aria-required": spec.required || undefined,
  };

  const label = (
    <Label htmlFor={id} className="flex items-center gap-1">
      <code className="font-mono text-[13px]">{spec.name}</code>
      {spec.required ? (
        <span aria-hidden="true" className="text-danger-text">
          *
        </span>
      ) : null}
    </Label>
  );

  const hint = (
    <p id={hintId} className="text-xs text-muted">
      {spec.description} <span className="whitespace-nowrap">({summary ?? typeSummary(spec)})</span>
    </p>
  );

  const exampleRow = example ? <ExampleRow id={exampleId} name={spec.name} example={example} onUse={onChange} /> : null;

  const errorRow = error ? (
    <p id={errorId} data-testid={`param-error-${spec.name}`} className="flex items-start gap-1.5 text-xs font-medium text-danger-text">
      <ErrorIcon />
      <span className="min-w-0 break-words">{error}</span>
    </p>
  ) : null;

  if (spec.type === "bool") {
    return (
      <div className="space-y-1.5">
        <div className="flex items-center gap-2">
          <input
            type="checkbox"
            {...common}
            checked={value === "true"}
            onChange={(e) => onChange(e.target.checked ? "true" : "false")}
            className="size-4 rounded border-line-strong accent-accent focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-focus"
          />
          {label}
        </div>
        {hint}
        {errorRow}
      </div>
    );
  }

  let control;
  if (spec.type === "order") {
    control = (
      <Select {...common} value={value} onChange={(e) => onChange(e.target.value)}>
        {["asc", "desc"].map((o) => (
          <option key={o} value={o}>
            {o === spec.default ? `${o} (default)` : o}
          </option>
        ))}
      </Select>
    );
  } else {
    const numeric = spec.type === "height" || spec.type === "int";
    control = (
      <Input
        ref={input}
        {...common}
        type="text"
        inputMode={numeric ? "numeric" : undefined}
        autoComplete="off"
        autoCapitalize="off"
        autoCorrect="off"
        spellCheck={false}
        placeholder={placeholder ?? placeholderOf(spec)}
        className={spec.type === "query" || spec.type === "hash" ? "font-mono text-[13px]" : undefined}
        value={value}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  }

  const query = check.query;
  return (
    <div className="space-y-1.5">
      {label}
      {control}
      {query ? (
        <QueryCaret
          query={query.text}
          error={query.error}
          onLocate={() => {
            const el = input.current;
            if (!el) return;
            // The endpoint reads the query trimmed and unquoted: its offsets count from `start`.
            const at = query.start + query.error.offset;
            el.focus();
            el.setSelectionRange(at, Math.min(at + 1, value.length));
          }}
        />
      ) : null}
      {errorRow}
      {hint}
      {exampleRow}
    </div>
  );
}
