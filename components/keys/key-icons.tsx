export const EyeIcon = () => (
  <svg aria-hidden="true" viewBox="0 0 16 16" className="size-3.5" fill="none" stroke="currentColor" strokeWidth="1.5">
    <path d="M1.5 8S4 3.5 8 3.5 14.5 8 14.5 8 12 12.5 8 12.5 1.5 8 1.5 8Z" strokeLinejoin="round" />
    <circle cx="8" cy="8" r="2" />
  </svg>
);

export const EyeOffIcon = () => (
  <svg aria-hidden="true" viewBox="0 0 16 16" className="size-3.5" fill="none" stroke="currentColor" strokeWidth="1.5">
    <path d="M2 2l12 12M6.6 3.7A6.4 6.4 0 0 1 8 3.5c4 0 6.5 4.5 6.5 4.5a11 11 0 0 1-1.9 2.4M10.4 11.9A5.7 5.7 0 0 1 8 12.5C4 12.5 1.5 8 1.5 8a11.3 11.3 0 0 1 2.6-3" strokeLinecap="round" strokeLinejoin="round" />
  </svg>
);

export const ResetIcon = () => (
  <svg aria-hidden="true" viewBox="0 0 16 16" className="size-3.5" fill="none" stroke="currentColor" strokeWidth="1.5">
    <path d="M2.5 8a5.5 5.5 0 1 0 1.7-4M2.5 2.5V5.5h3" strokeLinecap="round" strokeLinejoin="round" />
  </svg>
);
