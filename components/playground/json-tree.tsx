"use client";

import { useState } from "react";
import { cn } from "@/components/ui/cn";

/** Strings longer than this are cut, with a button to show them whole (base64 transactions, proofs). */
const LONG_STRING = 96;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isContainer(v: unknown): v is Json[] | Record<string, Json> {
  return typeof v === "object" && v !== null;
}

function entriesOf(v: Json[] | Record<string, Json>): Array<[string, Json]> {
  return Array.isArray(v) ? v.map((item, i) => [String(i), item]) : Object.entries(v);
}

function summary(v: Json[] | Record<string, Json>): string {
  const n = Array.isArray(v) ? v.length : Object.keys(v).length;
  if (Array.isArray(v)) return `[ ${n} item${n === 1 ? "" : "s"} ]`;
  return `{ ${n} key${n === 1 ? "" : "s"} }`;
}

const Chevron = ({ open }: { open: boolean }) => (
  <svg aria-hidden="true" viewBox="0 0 16 16" className={cn("size-3 shrink-0 text-muted transition-transform", open && "rotate-90")} fill="none" stroke="currentColor" strokeWidth="2">
    <path d="m6 4 4 4-4 4" strokeLinecap="round" strokeLinejoin="round" />
  </svg>
);

function Key({ name, inArray }: { name: string | null; inArray: boolean }) {
  if (name === null) return null;
  return <span className={inArray ? "text-muted" : "text-accent-text"}>{inArray ? `${name}:` : `"${name}":`}</span>;
}

function LongString({ value }: { value: string }) {
  const [open, setOpen] = useState(false);
  return (
    <span className="break-all text-emerald-700 dark:text-emerald-300">
      &quot;{open ? value : `${value.slice(0, LONG_STRING)}…`}&quot;{" "}
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        className="rounded px-1 font-sans text-xs font-medium whitespace-nowrap text-accent-text underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-focus"
      >
        {open ? "Show less" : `Show all ${value.length} characters`}
      </button>
    </span>
  );
}

function Primitive({ value }: { value: null | boolean | number | string }) {
  if (typeof value === "string") {
    return value.length > LONG_STRING ? <LongString value={value} /> : <span className="break-all text-emerald-700 dark:text-emerald-300">&quot;{value}&quot;</span>;
  }
  if (typeof value === "number") return <span className="text-sky-700 dark:text-sky-300">{value}</span>;
  if (typeof value === "boolean") return <span className="text-violet-700 dark:text-violet-300">{String(value)}</span>;
  return <span className="text-muted">null</span>;
}

interface NodeProps {
  name: string | null;
  inArray: boolean;
  value: Json;
  depth: number;
  /** Whether containers start open, by depth. */
  openAt: (depth: number) => boolean;
}

function JsonNode({ name, inArray, value, depth, openAt }: NodeProps) {
  const [open, setOpen] = useState(() => openAt(depth));
  if (!isContainer(value)) {
    return (
      <li className="py-0.5 pl-[1.125rem]">
        <Key name={name} inArray={inArray} /> <Primitive value={value} />
      </li>
    );
  }
  const entries = entriesOf(value);
  if (entries.length === 0) {
    return (
      <li className="py-0.5 pl-[1.125rem]">
        <Key name={name} inArray={inArray} /> <span className="text-muted">{Array.isArray(value) ? "[]" : "{}"}</span>
      </li>
    );
  }
  return (
    <li className="py-0.5">
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        className="inline-flex items-center gap-1.5 rounded px-0.5 text-left hover:bg-subtle focus-visible:outline-2 focus-visible:outline-focus"
      >
        <Chevron open={open} />
        <Key name={name} inArray={inArray} />
        <span className="text-muted">{summary(value)}</span>
      </button>
      {open ? (
        <ul className="ml-[0.4rem] border-l border-line pl-3">
          {entries.map(([k, v]) => (
            <JsonNode key={k} name={k} inArray={Array.isArray(value)} value={v} depth={depth + 1} openAt={openAt} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/**
 * A JSON value as a tree of disclosure buttons (each with aria-expanded), so that it is browsed
 * with Tab and Enter like any other control. Containers start open down to `openDepth`.
 */
export function JsonTree({ value, openDepth, label, className }: { value: unknown; openDepth: number; label: string; className?: string }) {
  const openAt = (depth: number) => depth < openDepth;
  const root = value as Json;
  return (
    <ul aria-label={label} className={cn("font-mono text-[12.5px] leading-relaxed text-fg", className)}>
      {isContainer(root) ? (
        entriesOf(root).map(([k, v]) => <JsonNode key={k} name={k} inArray={Array.isArray(root)} value={v} depth={0} openAt={openAt} />)
      ) : (
        <JsonNode name={null} inArray={false} value={root} depth={0} openAt={openAt} />
      )}
    </ul>
  );
}
