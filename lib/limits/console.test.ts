/**
 * The console's limits (sign-in backoff, sign-up limits and budget, spent sign-up challenges,
 * verification mail, test inboxes) held by two web processes of one cluster together. The two
 * processes are two copies of lib/ in this test process (lib/testing/cluster.ts), sharing one real
 * redis-server.
 */
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTwoProcesses } from "@/lib/testing/cluster";
import { freePort } from "@/lib/testing/ports";
import { startRedis, type TestRedis } from "@/lib/testing/redis";

let redis: TestRedis;
let smtp: SMTPServer;
let a: WebProcess;
let b: WebProcess;

type WebProcess = Awaited<ReturnType<typeof startProcess>>;

/** One web process: its copy of the modules, its services on its own connection to the shared limits. */
async function startProcess(redisUrl: string) {
  const harness = await import("@/lib/testing/harness");
  await harness.connectTestDatabase();
  const { SharedLimits } = await import("@/lib/limits/shared");
  const { createServices, installServices } = await import("@/lib/services");
  const { getEnv } = await import("@/lib/env");
  // Two live web processes: each one's share of a limit while Redis is away is half.
  const limits = new SharedLimits({ redisUrl, webProcesses: () => 2, probeMs: 100 });
  installServices(createServices(getEnv(), limits));
  return {
    limits,
    harness,
    throttle: await import("@/lib/auth/throttle"),
    users: await import("@/lib/auth/users"),
    challenges: await import("@/lib/auth/sign-up-challenge"),
    pow: await import("@/lib/auth/proof-of-work"),
    mail: await import("@/lib/auth/email-verification"),
    inbox: await import("@/lib/webhooks/inbox"),
    env: getEnv(),
  };
}

beforeAll(async () => {
  redis = await startRedis();
  // Verification mail goes to a real SMTP server on loopback that takes everything.
  const smtpPort = await freePort();
  smtp = new SMTPServer({ disabledCommands: ["STARTTLS", "AUTH"], logger: false, onData: (stream, _s, done) => stream.on("end", () => done()).resume() });
  await new Promise<void>((resolve) => smtp.listen(smtpPort, "127.0.0.1", resolve));
  process.env.SMTP_URL = `smtp://127.0.0.1:${smtpPort}`;
  process.env.MAIL_FROM = "Blockgate <no-reply@blockgate.test>";
  [a, b] = await startTwoProcesses(() => startProcess(redis.url));
}, 60_000);

afterAll(async () => {
  for (const p of [a, b]) await p?.limits.stop();
  await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  await redis?.stop();
  delete process.env.SMTP_URL;
  delete process.env.MAIL_FROM;
});

/** The code of what `run` throws or rejects with, or "ok". */
async function outcome(run: () => unknown): Promise<string> {
  return Promise.resolve()
    .then(run)
    .then(
    () => "ok",
    (e: unknown) => (e as { code?: string }).code ?? (e as Error).name,
  );
}

/** `n` sign-ups from `ip` taken through a and b in turn: how many were let through. */
async function signUps(ip: string, n: number, through: WebProcess[] = [a, b]): Promise<number> {
  let taken = 0;
  for (let i = 0; i < n; i++) if ((await outcome(() => through[i % through.length]!.throttle.takeSignUp(ip))) === "ok") taken++;
  return taken;
}

/** Sign-ups let through across the tests, for the budget over all clients. */
let signedUp = 0;

describe("the console's limits held by two web processes together", () => {
  it("sign-ins: five wrong passwords for one email and address, through either process, make both refuse the next attempt", async () => {
    const email = a.harness.uniqueEmail("shared-backoff");
    await a.users.createUser({ email, password: "the right password" });
    for (let i = 0; i < 5; i++) expect(await outcome(() => [a, b][i % 2]!.users.verifyCredentials(email, "a wrong password", "203.0.113.70"))).toBe("SignInError");
    for (const p of [a, b]) expect(await outcome(() => p.users.verifyCredentials(email, "the right password", "203.0.113.70"))).toBe("TOO_MANY_REQUESTS");
    // The owner from another address is not held up.
    expect(await outcome(() => b.users.verifyCredentials(email, "the right password", "198.51.100.70"))).toBe("ok");
  });

  it("sign-ups: one address gets its 30 through both processes together, not 30 each", async () => {
    const taken = await signUps("203.0.113.71", 40);
    signedUp += taken;
    expect(taken).toBe(a.env.SIGN_UP_PER_ADDRESS_PER_HOUR);
  });

  it("sign-ups: the budget over all clients is one: once both processes together took it, both ask for a proof of work", async () => {
    const budget = a.throttle.signUpBudget(a.env.SIGN_UP_FREE_PER_HOUR)!.burst;
    expect((await b.throttle.signUpChallenge()).difficulty).toBe(0);
    // From addresses of distinct networks, a and b in turn, until a sign-up is told to bring a proof.
    for (let i = 0; i < 2 * budget; i++) {
      const result = await outcome(() => [a, b][i % 2]!.throttle.takeSignUp(`198.18.${i}.1`));
      if (result !== "ok") {
        expect(result).toBe("MISSING_REQUIRED_PARAMETER");
        break;
      }
      signedUp++;
    }
    expect(signedUp).toBe(budget);
    for (const p of [a, b]) expect((await p.throttle.signUpChallenge()).difficulty).toBeGreaterThan(0);
  });

  it("a sign-up challenge solved once is spent for both processes", async () => {
    const { challenge, difficulty } = a.challenges.issueChallenge(8);
    const proof = { challenge, nonce: await a.pow.solveChallenge(challenge, difficulty) };
    await a.challenges.spendProof(proof);
    await expect(b.challenges.spendProof(proof)).rejects.toMatchObject({ code: "INVALID_PARAMETER", message: expect.stringMatching(/^proof: This challenge was already used\./) });
  });

  it("verification mail: an account gets its 3 sends through both processes together, not 3 each", async () => {
    const user = await a.users.createUser({ email: a.harness.uniqueEmail("shared-resend"), password: "the right password" });
    const sent = [];
    for (let i = 0; i < 6; i++) sent.push(await outcome(() => [a, b][i % 2]!.mail.resendVerificationEmail(user.id)));
    expect(sent).toEqual(["ok", "ok", "ok", "TOO_MANY_REQUESTS", "TOO_MANY_REQUESTS", "TOO_MANY_REQUESTS"]);
  });

  it("test inboxes: 30 requests at once through both processes, 20 are taken, as one process takes", async () => {
    const { projectId } = await a.harness.createTestProject("Shared inbox");
    const token = new URL((await a.inbox.createInbox(projectId)).url).pathname.split("/").pop()!;
    const request = { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.from("{}") };
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => outcome(() => [a, b][i % 2]!.inbox.recordInboxRequest(token, request))));
    expect(results.filter((r) => r === "ok")).toHaveLength(a.inbox.INBOX_RATE.burst);
    expect(results.filter((r) => r !== "ok")).toEqual(Array(10).fill("TOO_MANY_REQUESTS"));
  });

  it("with Redis frozen, each process holds its share of every limit, nobody is told Redis is away, and sharing comes back", async () => {
    redis.freeze();
    try {
      // The first call waits for Redis's short command timeout, then is answered from the local share.
      expect(await signUps("203.0.113.72", 40, [a])).toBe(a.env.SIGN_UP_PER_ADDRESS_PER_HOUR / 2);
      expect(a.limits.mode).toBe("local");
      const email = a.harness.uniqueEmail("frozen-backoff");
      await a.users.createUser({ email, password: "the right password" });
      // Two of the five free failures.
      for (let i = 0; i < 2; i++) expect(await outcome(() => a.users.verifyCredentials(email, "a wrong password", "203.0.113.73"))).toBe("SignInError");
      expect(await outcome(() => a.users.verifyCredentials(email, "the right password", "203.0.113.73"))).toBe("TOO_MANY_REQUESTS");
      const user = await a.users.createUser({ email: a.harness.uniqueEmail("frozen-resend"), password: "the right password" });
      expect([await outcome(() => a.mail.resendVerificationEmail(user.id)), await outcome(() => a.mail.resendVerificationEmail(user.id))]).toEqual(["ok", "TOO_MANY_REQUESTS"]);
    } finally {
      redis.thaw();
    }
    await expect.poll(() => [a.limits.mode, b.limits.mode], { timeout: 5_000 }).toEqual(["shared", "shared"]);
  });
});
