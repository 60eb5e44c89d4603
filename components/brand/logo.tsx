import { cn } from "@/components/ui/cn";

export function LogoMark({ className }: { className?: string }) {
  return (
    <svg aria-hidden="true" viewBox="0 0 32 32" className={cn("size-7", className)}>
      <rect width="32" height="32" rx="8" className="fill-accent" />
      <path d="M9 9.5h9.2a4 4 0 0 1 0 8H9z" fill="none" stroke="white" strokeWidth="2.4" strokeLinejoin="round" />
      <path d="M9 17.5h10.2a3.6 3.6 0 0 1 0 7.2H9z" fill="none" stroke="white" strokeOpacity="0.72" strokeWidth="2.4" strokeLinejoin="round" />
    </svg>
  );
}

export function Logo({ className }: { className?: string }) {
  return (
    <span className={cn("inline-flex items-center gap-2.5", className)}>
      <LogoMark />
      <span className="text-[15px] font-semibold tracking-tight text-fg">Blockgate</span>
    </span>
  );
}
