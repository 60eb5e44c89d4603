import { defineConfig } from "prisma/config";

// The Prisma CLI is used only for `prisma generate` here; migrations run through
// our own command on the WebAssembly schema engine (bin/db.ts), so no URL is needed.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
