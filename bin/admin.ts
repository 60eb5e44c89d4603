/**
 * Admin CLI for self-hosters and automation. Output is JSON on stdout; errors are JSON on
 * stderr with a non-zero exit.
 *   npm run admin -- create-user --email E --password P
 *   npm run admin -- create-project --email E --name N
 *   npm run admin -- list-projects --email E
 *   npm run admin -- reset-key --project ID
 *   npm run admin -- set-plan --project ID --plan FREE|STARTER_PLUS|DEVELOPER|BUSINESS|ENTERPRISE
 */
import { parseArgs } from "node:util";
import { runAdmin } from "@/lib/admin";
import { AppError } from "@/lib/errors";
import { errorMessage } from "@/lib/log";

const [command, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: { email: { type: "string" }, password: { type: "string" }, name: { type: "string" }, project: { type: "string" }, plan: { type: "string" } },
  strict: false,
});

runAdmin(command, values as Record<string, string | undefined>)
  .then((out) => {
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
    process.exit(0);
  })
  .catch((e: unknown) => {
    // Anything else (a database that is down, say) keeps its own code, such as ECONNREFUSED or P1001.
    const code = typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : "ERROR";
    const error = e instanceof AppError ? e.toJSON() : { code, message: errorMessage(e) };
    process.stderr.write(JSON.stringify({ error }) + "\n");
    process.exit(1);
  });
