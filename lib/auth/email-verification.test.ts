import { randomBytes } from "node:crypto";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sha256Hex } from "@/lib/crypto";
import { db, disconnectDb } from "@/lib/db/client";
import { getEnv, resetEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { completeOnboarding, createProject } from "@/lib/projects/service";
import { captureLogs } from "@/lib/testing/logs";
import { connectTestDatabase, uniqueEmail } from "@/lib/testing/harness";
import { freePort } from "@/lib/testing/ports";
import { pendingVerification, RESEND_LIMIT, resendVerificationEmail, verifyEmail, VERIFICATION_LINK_TTL_MS } from "./email-verification";
import { signUp, upsertGithubUser } from "./users";
import { setRootLogger } from "@/lib/log";

// Everything this process logs (the process logger is created on first use).
const logs = captureLogs();
setRootLogger(logs.logger);

/** A real SMTP server on loopback that takes mail from one account, and what it received. */
interface Received {
  from: string;
  to: string[];
  /** The message as sent, quoted-printable soft line breaks undone. */
  text: string;
}
const inbox: Received[] = [];
let smtp: SMTPServer;
let smtpPort: number;
const SMTP_USER = "mailer";
const SMTP_PASS = randomBytes(9).toString("hex");
const MAIL_FROM = "Blockgate <no-reply@blockgate.test>";

function useMailServer(password: string | null) {
  if (password === null) {
    delete process.env.SMTP_URL;
    delete process.env.MAIL_FROM;
  } else {
    process.env.SMTP_URL = `smtp://${SMTP_USER}:${password}@127.0.0.1:${smtpPort}`;
    process.env.MAIL_FROM = MAIL_FROM;
  }
  resetEnv();
  getEnv();
}

beforeAll(async () => {
  smtp = new SMTPServer({
    // Plain SMTP with AUTH on loopback (no certificate to trust in a test).
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASS) callback(null, { user: SMTP_USER });
      else callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          text: raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        });
        callback();
      });
    },
  });
  smtpPort = await freePort();
  await new Promise<void>((resolve) => smtp.listen(smtpPort, "127.0.0.1", resolve));
  await connectTestDatabase();
});
afterAll(async () => {
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await disconnectDb();
});
beforeEach(() => useMailServer(SMTP_PASS));

async function waitFor<T>(find: () => T | undefined, what: string): Promise<T> {
  const until = Date.now() + 15_000;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const mailsTo = (email: string) => inbox.filter((m) => m.to.includes(email));

/** The tokens of the verification links mailed to the address, oldest first. */
const tokensFor = (email: string) => mailsTo(email).map((m) => /\/verify-email\?token=([A-Za-z0-9_-]{43})/.exec(m.text)?.[1]);

async function nthToken(email: string, n: number): Promise<string> {
  return waitFor(() => tokensFor(email)[n - 1], `mail ${n} to ${email}`);
}

let addresses = 0;
/** Each sign-up from its own documentation address, so the per-address sign-up limit stays out of the way. */
async function newAccount() {
  const email = uniqueEmail("verify");
  const user = await signUp({ email, password: "correct horse battery" }, `192.0.2.${++addresses}`);
  return { ...user, email };
}

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("email verification with an SMTP server", () => {
  it("mails a link at sign-up (only its hash stored, valid 24 hours) that verifies the address once", async () => {
    const user = await newAccount();
    const token = await nthToken(user.email, 1);
    const mail = mailsTo(user.email)[0]!;
    expect(mail.from).toBe("no-reply@blockgate.test");
    expect(mail.text).toContain("From: Blockgate <no-reply@blockgate.test>");
    expect(mail.text).toContain("Subject: Verify your email address for Blockgate");
    expect(mail.text).toContain(`${getEnv().PUBLIC_URL}/verify-email?token=${token}`);

    const stored = await db().emailVerification.findMany({ where: { userId: user.id } });
    expect(stored).toHaveLength(1);
    expect(stored[0]!.tokenHash).toBe(sha256Hex(token));
    expect(JSON.stringify(stored)).not.toContain(token);
    const lifetime = stored[0]!.expiresAt.getTime() - stored[0]!.createdAt.getTime();
    expect(Math.abs(lifetime - VERIFICATION_LINK_TTL_MS)).toBeLessThan(60_000);

    expect(await pendingVerification(user.id)).toEqual({ email: user.email });
    expect(await verifyEmail(token)).toBe("verified");
    expect(await pendingVerification(user.id)).toBeNull();
    expect((await db().user.findUniqueOrThrow({ where: { id: user.id } })).emailVerifiedAt).toBeInstanceOf(Date);
    expect(await db().emailVerification.count({ where: { userId: user.id } })).toBe(0);
    expect(await verifyEmail(token)).toBe("invalid");
  });

  it("lets an unverified account use its first project but not create a second one", async () => {
    const user = await newAccount();
    await completeOnboarding(user.id, { name: "Ada", organization: "", useCase: "wallet" });
    const denied = await refusal(createProject(user.id, "Second"));
    expect(denied.code).toBe("PERMISSION_DENIED");
    expect(denied.status).toBe(403);
    expect(denied.message).toContain("Verify your email address");
    expect(await db().project.count({ where: { ownerId: user.id } })).toBe(1);

    expect(await verifyEmail(await nthToken(user.email, 1))).toBe("verified");
    await createProject(user.id, "Second");
    expect(await db().project.count({ where: { ownerId: user.id } })).toBe(2);
  });

  it("refuses an expired link and a made-up one, changing nothing", async () => {
    const user = await newAccount();
    const token = await nthToken(user.email, 1);
    expect(await verifyEmail(token, new Date(Date.now() + VERIFICATION_LINK_TTL_MS + 60_000))).toBe("expired");
    expect(await verifyEmail(token)).toBe("invalid");
    for (const bad of ["", "x", randomBytes(32).toString("base64url"), `${token.slice(0, 42)}'`, "a".repeat(10_000)]) expect(await verifyEmail(bad)).toBe("invalid");
    expect(await pendingVerification(user.id)).toEqual({ email: user.email });
  });

  it("resends new links up to the limit, then answers 429 with Retry-After; every link sent works until one is used", async () => {
    const user = await newAccount();
    const first = await nthToken(user.email, 1);
    // The sign-up's mail counts: RESEND_LIMIT.burst mails at once in all.
    for (let i = 1; i < RESEND_LIMIT.burst; i++) expect(await resendVerificationEmail(user.id)).toEqual({ email: user.email });
    const limited = await refusal(resendVerificationEmail(user.id));
    expect(limited.code).toBe("TOO_MANY_REQUESTS");
    expect(Number(limited.headers?.["Retry-After"])).toBeGreaterThan(500);
    expect(await nthToken(user.email, RESEND_LIMIT.burst)).not.toBe(first);
    expect(mailsTo(user.email)).toHaveLength(RESEND_LIMIT.burst);

    expect(await verifyEmail(first)).toBe("verified");
    const again = await refusal(resendVerificationEmail(user.id));
    expect(again).toMatchObject({ code: "REJECTED", message: "Your email address is already verified." });
  });

  it("creates the account even when the mail server refuses; resend then answers 503 without using up the limit", async () => {
    useMailServer("wrong-password");
    const before = logs.lines.length;
    const user = await newAccount();
    expect(await db().user.count({ where: { id: user.id } })).toBe(1);
    const warning = await waitFor(() => logs.lines.slice(before).find((l) => l.msg.includes("could not be sent")), "the failure to be logged");
    expect(warning).toMatchObject({ level: "warn", component: "auth", server: `127.0.0.1:${smtpPort}` });
    expect(JSON.stringify(logs.lines.slice(before))).not.toContain("wrong-password");

    for (let i = 0; i < RESEND_LIMIT.burst + 1; i++) {
      const failed = await refusal(resendVerificationEmail(user.id));
      expect(failed).toMatchObject({ code: "UNAVAILABLE", status: 503 });
      expect(failed.headers?.["Retry-After"]).toBe("60");
    }
    useMailServer(SMTP_PASS);
    await resendVerificationEmail(user.id);
    expect(await verifyEmail(await nthToken(user.email, 1))).toBe("verified");
  });

  it("takes GitHub's verified address as verified, for a new account and for one it is linked to", async () => {
    const fresh = await upsertGithubUser(`gh-${randomBytes(4).toString("hex")}`, uniqueEmail("gh"), "Octo");
    expect(await pendingVerification(fresh.id)).toBeNull();
    const existing = await newAccount();
    await upsertGithubUser(`gh-${randomBytes(4).toString("hex")}`, existing.email, null);
    expect(await pendingVerification(existing.id)).toBeNull();
  });
});

describe("without SMTP_URL", () => {
  it("sends nothing and asks nothing of new accounts, and says so once in the log", async () => {
    useMailServer(null);
    const before = logs.lines.length;
    const a = await newAccount();
    const b = await newAccount();
    await completeOnboarding(a.id, { name: "Ada", organization: "", useCase: "wallet" });
    await createProject(a.id, "Second");
    expect(await pendingVerification(a.id)).toBeNull();
    expect(await pendingVerification(b.id)).toBeNull();
    expect(await refusal(resendVerificationEmail(a.id))).toMatchObject({ code: "REJECTED" });
    expect([...mailsTo(a.email), ...mailsTo(b.email)]).toEqual([]);
    expect(await db().emailVerification.count({ where: { userId: { in: [a.id, b.id] } } })).toBe(0);
    const notes = logs.lines.slice(before).filter((l) => l.msg.includes("SMTP_URL is not set"));
    expect(notes).toEqual([expect.objectContaining({ level: "info", component: "mail" })]);
  });
});
