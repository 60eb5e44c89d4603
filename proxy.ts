import { NextResponse, type NextRequest } from "next/server";
import { getEnv } from "@/lib/env";
import { contentSecurityPolicy, nonce, strictTransportSecurity } from "@/lib/security-headers";

/**
 * Runs before every console page: a fresh CSP nonce per response, handed to the render in the
 * request headers (Next.js takes it from the Content-Security-Policy request header; the root
 * layout reads x-nonce for its own inline script), and the security headers on the response.
 */
export function proxy(request: NextRequest): NextResponse {
  const env = getEnv();
  const https = env.PUBLIC_URL.startsWith("https://");
  const value = nonce();
  const policy = contentSecurityPolicy({ nonce: value, dev: env.NODE_ENV === "development", https });
  const headers = new Headers(request.headers);
  headers.set("x-nonce", value);
  headers.set("content-security-policy", policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("Content-Security-Policy", policy);
  const hsts = strictTransportSecurity({ production: env.NODE_ENV === "production", https });
  if (hsts) response.headers.set("Strict-Transport-Security", hsts);
  return response;
}

export const config = {
  // Pages only: API answers are JSON, and static files carry no inline code.
  matcher: ["/((?!api/|_next/static/|_next/image|favicon.ico|icon.svg).*)"],
};
