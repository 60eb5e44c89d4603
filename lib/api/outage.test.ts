import { describe, expect, it } from "vitest";
import { POST as signUpPost } from "@/app/api/sign-up/route";
import { authOptions } from "@/lib/auth/options";
import { CLIENT_IP_HEADER } from "@/lib/client-ip";
import { databaseOutage } from "@/lib/db/outage";
import { faultProxyDatabase } from "@/lib/testing/fault-proxy";
import { uniqueEmail } from "@/lib/testing/harness";
import { captureLogs } from "@/lib/testing/logs";
import { setRootLogger } from "@/lib/log";

// The console's API reaches PostgreSQL through a proxy that can refuse every connection.
const logs = captureLogs();
setRootLogger(logs.logger);
const { proxy } = faultProxyDatabase();

const PASSWORD = "a long enough password";

function signUp(email: string): Promise<Response> {
  return signUpPost(
    new Request("http://localhost:3000/api/sign-up", {
      method: "POST",
      headers: { "Content-Type": "application/json", [CLIENT_IP_HEADER]: "198.51.100.7" },
      body: JSON.stringify({ email, password: PASSWORD }),
    }),
  );
}

/** The credentials provider's authorize(), as next-auth calls it for a sign-in form. */
function authorize(email: string): Promise<unknown> {
  const provider = authOptions().providers[0] as unknown as { options: { authorize(credentials: Record<string, string>, req: { headers: Record<string, string> }): Promise<unknown> } };
  return provider.options.authorize({ email, password: PASSWORD }, { headers: { [CLIENT_IP_HEADER]: "198.51.100.7" } });
}

async function waitFor(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("the console API while the database is unreachable", () => {
  it("answers 503 UNAVAILABLE with Retry-After (sign-up; a sign-in says so), logs the outage once, and works again when the database is back", async () => {
    const email = uniqueEmail("outage");
    expect((await signUp(email)).status).toBe(201);

    proxy().refuse();
    try {
      for (const res of [await signUp(uniqueEmail("outage")), await signUp(uniqueEmail("outage"))]) {
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("5");
        expect(await res.json()).toEqual({ code: "UNAVAILABLE", message: "The service's database is unreachable at the moment. Please retry shortly." });
      }
      // A sign-in fails with that message, not the driver's (next-auth shows it in the form; the
      // route answers it with 503 and Retry-After while the outage lasts).
      await expect(authorize(email)).rejects.toThrow(/^The service's database is unreachable at the moment\. Please retry shortly\.$/);
      expect(databaseOutage()).toBeDefined();
    } finally {
      proxy().pass();
    }
    await waitFor("the outage's end", () => databaseOutage() === undefined);
    expect((await signUp(uniqueEmail("outage"))).status).toBe(201);
    expect(await authorize(email)).toMatchObject({ email });

    expect(logs.messages.filter((m) => m.startsWith("the database is unreachable"))).toHaveLength(1);
    expect(logs.messages.filter((m) => m.startsWith("the database answers again after"))).toHaveLength(1);
    expect(logs.lines.filter((l) => l.level === "error" && l.msg !== logs.messages.find((m) => m.startsWith("the database is unreachable")))).toEqual([]);
  });
});
