"use client";

import { useId, useRef, useState, type KeyboardEvent, type ReactNode } from "react";
import { Badge } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";

export interface InterfaceTab {
  id: string;
  label: string;
  /** The tab's content; a tab without one is shown as coming soon and cannot be selected. */
  panel?: ReactNode;
  /** Why a tab has no panel yet, for example "Coming soon". */
  note?: string;
}

/**
 * One tab per public interface (consensus RPC, EVM JSON-RPC, Aptos REST). Tabs follow the ARIA tabs
 * pattern: arrow keys, Home and End move between them; a coming-soon tab can be focused, so that
 * it is announced, but not selected.
 */
export function InterfaceTabs({ tabs, label, initialTab }: { tabs: InterfaceTab[]; label: string; initialTab?: string }) {
  const base = useId();
  // The requested tab when it has a panel, else the first tab that has one.
  const [selected, setSelected] = useState(() => tabs.find((t) => t.id === initialTab && t.panel !== undefined)?.id ?? tabs.find((t) => t.panel !== undefined)?.id);
  const refs = useRef<Array<HTMLButtonElement | null>>([]);
  const current = tabs.find((t) => t.id === selected);

  function onKeyDown(e: KeyboardEvent<HTMLButtonElement>, index: number) {
    const last = tabs.length - 1;
    const moves: Record<string, number> = { ArrowRight: index === last ? 0 : index + 1, ArrowLeft: index === 0 ? last : index - 1, Home: 0, End: last };
    const next = moves[e.key];
    if (next === undefined) return;
    e.preventDefault();
    refs.current[next]?.focus();
    const tab = tabs[next];
    if (tab?.panel !== undefined) setSelected(tab.id);
  }

  return (
    <div className="space-y-6">
      <div role="tablist" aria-label={label} className="flex flex-wrap gap-1 border-b border-line">
        {tabs.map((t, i) => {
          const active = t.id === selected;
          const available = t.panel !== undefined;
          return (
            <button
              key={t.id}
              ref={(el) => {
                refs.current[i] = el;
              }}
              type="button"
              role="tab"
              id={`${base}-tab-${t.id}`}
              aria-selected={active}
              aria-controls={active ? `${base}-panel-${t.id}` : undefined}
              aria-disabled={available ? undefined : true}
              tabIndex={active ? 0 : -1}
              onClick={() => {
                if (available) setSelected(t.id);
              }}
              onKeyDown={(e) => onKeyDown(e, i)}
              className={cn(
                "-mb-px inline-flex items-center gap-2 border-b-2 px-3 py-2.5 text-sm font-medium transition-colors focus-visible:outline-2 focus-visible:outline-focus",
                active ? "border-accent text-fg" : "border-transparent text-muted",
                available ? "hover:text-fg" : "cursor-not-allowed opacity-70",
              )}
            >
              {t.label}
              {t.note ? <Badge>{t.note}</Badge> : null}
            </button>
          );
        })}
      </div>
      {current?.panel !== undefined ? (
        // Keyed by tab: each tab's panel starts afresh (the same component may render two tabs).
        <div key={current.id} role="tabpanel" id={`${base}-panel-${current.id}`} aria-labelledby={`${base}-tab-${current.id}`}>
          {current.panel}
        </div>
      ) : null}
    </div>
  );
}
