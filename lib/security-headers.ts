/**
 * Response headers that protect console pages in the browser: a Content-Security-Policy that
 * runs only scripts carrying this response's nonce (and what they load), and HSTS once the
 * console is served over https in production.
 */

export interface PageSecurity {
  /** Fresh and unguessable for every response (see nonce()). */
  nonce: string;
  /** `next dev`: React's debugging needs eval and the dev overlay inline styles. */
  dev: boolean;
  /** PUBLIC_URL is https. */
  https: boolean;
}

/** 128 random bits, base64: a CSP nonce. */
export function nonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
}

/**
 * The policy Next.js reads the nonce from (it adds the nonce to its own scripts and inline styles;
 * see https://nextjs.org/docs/app/guides/content-security-policy). 'strict-dynamic' lets the
 * nonced scripts load the page's chunks.
 */
export function contentSecurityPolicy({ nonce, dev, https }: PageSecurity): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    `style-src 'self' ${dev ? "'unsafe-inline'" : `'nonce-${nonce}'`}`,
    "img-src 'self' blob: data:",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    ...(https ? ["upgrade-insecure-requests"] : []),
  ].join("; ");
}

/** Browsers remember for a year to use https only; not for subdomains, which may be other services. */
export function strictTransportSecurity({ production, https }: { production: boolean; https: boolean }): string | null {
  return production && https ? "max-age=31536000" : null;
}
