import type { ReactNode } from "react";

const Icon = ({ children }: { children: ReactNode }) => (
  <svg aria-hidden="true" viewBox="0 0 20 20" className="size-4 shrink-0" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" strokeLinejoin="round">
    {children}
  </svg>
);

export const icons = {
  requests: (
    <Icon>
      <path d="M4 5.5h12M4 10h12M4 14.5h7" />
    </Icon>
  ),
  overview: (
    <Icon>
      <rect x="3" y="3" width="6" height="6" rx="1.2" />
      <rect x="11" y="3" width="6" height="6" rx="1.2" />
      <rect x="3" y="11" width="6" height="6" rx="1.2" />
      <rect x="11" y="11" width="6" height="6" rx="1.2" />
    </Icon>
  ),
  playground: (
    <Icon>
      <path d="m7 7-3 3 3 3M13 7l3 3-3 3M11 5l-2 10" />
    </Icon>
  ),
  webhooks: (
    <Icon>
      <path d="M8.5 6.2a2.8 2.8 0 1 1 3.6 2.7l-2 3.9M5.3 11.5a2.8 2.8 0 1 0 3.2 3.7h4.3M14.7 12.6a2.8 2.8 0 1 0-1.5-5.2" />
    </Icon>
  ),
  usage: (
    <Icon>
      <path d="M3.5 16.5h13M6 13.5V9M10 13.5V5.5M14 13.5v-6" />
    </Icon>
  ),
  keys: (
    <Icon>
      <circle cx="7" cy="12.5" r="3.5" />
      <path d="m9.5 10 6-6M13 6.5l2 2" />
    </Icon>
  ),
  plan: (
    <Icon>
      <rect x="3" y="5" width="14" height="10" rx="1.5" />
      <path d="M3 8.5h14M6 12h3" />
    </Icon>
  ),
  settings: (
    <Icon>
      <circle cx="10" cy="10" r="2.5" />
      <path d="M10 2.5v2M10 15.5v2M2.5 10h2M15.5 10h2M4.7 4.7l1.4 1.4M13.9 13.9l1.4 1.4M4.7 15.3l1.4-1.4M13.9 6.1l1.4-1.4" />
    </Icon>
  ),
  plus: (
    <Icon>
      <path d="M10 4.5v11M4.5 10h11" />
    </Icon>
  ),
  signOut: (
    <Icon>
      <path d="M8 3.5H5a1.5 1.5 0 0 0-1.5 1.5v10A1.5 1.5 0 0 0 5 16.5h3M12.5 13.5 16 10l-3.5-3.5M16 10H8" />
    </Icon>
  ),
  menu: (
    <Icon>
      <path d="M3.5 6h13M3.5 10h13M3.5 14h13" />
    </Icon>
  ),
  close: (
    <Icon>
      <path d="m5 5 10 10M15 5 5 15" />
    </Icon>
  ),
};
