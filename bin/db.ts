// Database commands (the Prisma CLI's migrate commands need a native engine we don't have):
//   npm run db:migrate                  apply pending migrations
//   npm run db:migration -- <name>      write a migration from changes to prisma/schema.prisma
//   npm run db:check                    fail when prisma/schema.prisma and the migrations disagree
//   npx tsx bin/db.ts status            show applied / pending migrations
// Uses DATABASE_URL when set, else the embedded PostgreSQL under DATA_DIR (started and stopped here).
import { ensureDatabase, type DatabaseHandle } from "../lib/db/connection";
import { applyMigrations, createMigration, diffMigrationsToSchema, listMigrations, migrationStatus } from "../lib/db/migrate";
import { debugSettings } from "../lib/env";

const USAGE = `Usage: tsx bin/db.ts <command>
  migrate         apply pending migrations
  create <name>   create prisma/migrations/<timestamp>_<name>/migration.sql from schema changes
  check           exit 1 when prisma/schema.prisma and prisma/migrations disagree
  status          list applied and pending migrations`;

class UsageError extends Error {}

const log = (msg: string) => console.error(`[db] ${msg}`);

async function run(command: string | undefined, args: string[]): Promise<number> {
  const commands: Record<string, (db: DatabaseHandle) => Promise<number>> = {
    async migrate(db) {
      const started = Date.now();
      const applied = await applyMigrations(db.url);
      if (applied.length === 0) {
        console.log(`Database is up to date (${(await listMigrations()).length} migrations).`);
      } else {
        console.log(`Applied ${applied.length} migration(s) in ${Date.now() - started} ms:`);
        for (const name of applied) console.log(`  ${name}`);
      }
      return 0;
    },
    async create(db) {
      const created = await createMigration(db.adminUrl, args[0] ?? "");
      if (created === null) {
        console.log("prisma/schema.prisma has no changes since the last migration: nothing to create.");
      } else {
        console.log(`Created prisma/migrations/${created}/migration.sql`);
        console.log("Review it, then run: npm run db:migrate");
      }
      return 0;
    },
    async check(db) {
      const diff = await diffMigrationsToSchema(db.adminUrl);
      if (diff === "") {
        console.log("prisma/schema.prisma and prisma/migrations agree.");
        return 0;
      }
      console.error("prisma/schema.prisma and prisma/migrations disagree. The migrations lack:\n");
      console.error(diff);
      console.error("\nCreate a migration with: npm run db:migration -- <name>");
      return 1;
    },
    async status(db) {
      const status = await migrationStatus(db.url);
      for (const name of status.applied) console.log(`applied  ${name}${status.edited.includes(name) ? " (edited since)" : ""}`);
      for (const name of status.failed) console.log(`FAILED   ${name}`);
      for (const name of status.pending) console.log(`pending  ${name}`);
      for (const name of status.unknown) console.log(`unknown  ${name} (in the database, not in prisma/migrations)`);
      console.log(status.upToDate ? "Database is up to date." : "Database is NOT up to date: run npm run db:migrate.");
      return status.upToDate ? 0 : 1;
    },
  };

  const handler = command ? commands[command] : undefined;
  if (!handler) throw new UsageError(command ? `Unknown command "${command}"` : "Missing command");
  if (command === "create" && !args[0]) {
    throw new UsageError("create needs a migration name, e.g. npm run db:migration -- add_webhooks");
  }

  const db = await ensureDatabase({ log });
  try {
    return await handler(db);
  } finally {
    await db.stop();
  }
}

const [command, ...args] = process.argv.slice(2);
run(command, args).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(`db ${command ?? ""}: ${err instanceof Error ? err.message : String(err)}`);
    if (debugSettings().stacks && err instanceof Error) console.error(err.stack);
    process.exit(1);
  },
);
