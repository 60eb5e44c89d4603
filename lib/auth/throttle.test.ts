import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as nextAuthPost } from "@/app/api/auth/[...nextauth]/route";
import { POST as signUpPost } from "@/app/api/sign-up/route";
import { CLIENT_IP_HEADER } from "@/lib/client-ip";
import { db, disconnectDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { connectTestDatabase, uniqueEmail } from "@/lib/testing/harness";
import { recordSignInFailure, takeSignUp } from "./throttle";
import { createUser, SignInError, verifyCredentials } from "./users";

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => disconnectDb());

const PASSWORD = "the right password";

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (e: unknown) => e,
  );
}

/** The seconds a 429 names in its message; they must equal its Retry-After. */
function secondsIn(message: string): number {
  return Number(/Try again in (\d+) seconds?\./.exec(message)?.[1]);
}

describe("sign-in throttle", () => {
  it("after five wrong passwords from one address refuses that address with TOO_MANY_REQUESTS, and the owner signs in from another", async () => {
    const email = uniqueEmail("pair");
    const user = await createUser({ email, password: PASSWORD });
    for (let i = 0; i < 5; i++) {
      const e = await refusal(verifyCredentials(email, "a wrong password", "203.0.113.10"));
      expect(e).toBeInstanceOf(SignInError);
      expect((e as SignInError).message).toBe("Wrong email or password.");
    }
    const throttled = await refusal(verifyCredentials(email, PASSWORD, "203.0.113.10"));
    expect(throttled).toBeInstanceOf(AppError);
    expect((throttled as AppError).code).toBe("TOO_MANY_REQUESTS");
    expect((throttled as AppError).headers).toEqual({ "Retry-After": "1" });
    expect((throttled as AppError).message).toBe("Too many failed sign-ins. Try again in 1 second.");

    // The owner, from another address, with the email in another case.
    expect(await verifyCredentials(email.toUpperCase(), PASSWORD, "198.51.100.20")).toEqual({ id: user.id, email, name: null });
    // Another account from the first address is not held up by this pair.
    const other = uniqueEmail("pair-other");
    await createUser({ email: other, password: PASSWORD });
    expect((await verifyCredentials(other, PASSWORD, "203.0.113.10")).email).toBe(other);
  });

  it("after twenty failures from one IPv6 /64 over any emails refuses every email from that network, not from others", async () => {
    const email = uniqueEmail("owner6");
    await createUser({ email, password: PASSWORD });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => refusal(verifyCredentials(uniqueEmail(`spray${i}`), "guess", `2001:db8:7:1::${(i + 1).toString(16)}`))),
    );
    const e = await refusal(verifyCredentials(email, PASSWORD, "2001:db8:7:1::ffff"));
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe("TOO_MANY_REQUESTS");
    expect((await verifyCredentials(email, PASSWORD, "2001:db8:7:2::1")).email).toBe(email);
  });

  it("answers a throttled next-auth credentials sign-in with 429, Retry-After and the error next-auth's client reads", async () => {
    const email = uniqueEmail("route");
    await createUser({ email, password: PASSWORD });
    // Ten failures of this pair: the wait is 32 s, long enough to still hold when the request arrives.
    for (let i = 0; i < 10; i++) await recordSignInFailure(email, "203.0.113.30");
    const form = (address: string) =>
      new Request("http://localhost:3000/api/auth/callback/credentials", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", [CLIENT_IP_HEADER]: address },
        body: new URLSearchParams({ email, password: PASSWORD, csrfToken: "t", json: "true" }),
      });
    const res = await nextAuthPost(form("203.0.113.30"), { params: Promise.resolve({ nextauth: ["callback", "credentials"] }) });
    expect(res.status).toBe(429);
    const body = (await res.json()) as { code: string; message: string; url: string };
    expect(body).toEqual({ code: "TOO_MANY_REQUESTS", message: expect.stringMatching(/^Too many failed sign-ins\. Try again in \d+ seconds\.$/), url: expect.any(String) });
    const seconds = secondsIn(body.message);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(32);
    expect(res.headers.get("retry-after")).toBe(String(seconds));
    expect(new URL(body.url).searchParams.get("error")).toBe(body.message);
  });
});

function signUpRequest(address: string, email: string): Request {
  return new Request("http://localhost:3000/api/sign-up", {
    method: "POST",
    headers: { "Content-Type": "application/json", [CLIENT_IP_HEADER]: address },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
}

describe("sign-up limits", () => {
  it("takes 30 sign-ups from one address, refuses the 31st with 429 and Retry-After, and still takes other addresses", async () => {
    const results = await Promise.all(Array.from({ length: 30 }, () => signUpPost(signUpRequest("203.0.113.40", uniqueEmail("burst")))));
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(201));

    const refusedEmail = uniqueEmail("refused");
    const res = await signUpPost(signUpRequest("203.0.113.40", refusedEmail));
    expect(res.status).toBe(429);
    const body = (await res.json()) as { code: string; message: string };
    expect(body).toEqual({ code: "TOO_MANY_REQUESTS", message: expect.stringMatching(/^Too many sign-ups from your network\. Try again in \d+ seconds\.$/) });
    // One every 2 minutes: the wait is just under 120 s.
    expect(secondsIn(body.message)).toBeGreaterThan(60);
    expect(secondsIn(body.message)).toBeLessThanOrEqual(120);
    expect(res.headers.get("retry-after")).toBe(String(secondsIn(body.message)));
    expect(await db().user.count({ where: { email: refusedEmail } })).toBe(0);

    // Bad input is still explained as such, and another address signs up.
    const bad = await signUpPost(
      new Request("http://localhost:3000/api/sign-up", {
        method: "POST",
        headers: { "Content-Type": "application/json", [CLIENT_IP_HEADER]: "203.0.113.40" },
        body: JSON.stringify({ email: "nope", password: PASSWORD }),
      }),
    );
    expect(bad.status).toBe(400);
    expect((await signUpPost(signUpRequest("203.0.113.41", uniqueEmail("other")))).status).toBe(201);
  });

  it("holds 20 flooding addresses of one IPv6 /56 to their network's 60 sign-ups, and a new address still signs up", async () => {
    const flooders = Array.from({ length: 20 }, (_, i) => `2001:db8:5a:${(i + 1).toString(16)}::1`);
    let taken = 0;
    for (let round = 0; round < 40; round++) {
      for (const ip of flooders) {
        try {
          await takeSignUp(ip);
          taken++;
        } catch (e) {
          expect((e as AppError).message).toMatch(/^Too many sign-ups from your network\. Try again in \d+ seconds?\.$/);
        }
      }
    }
    expect(taken).toBe(60);

    for (const ip of flooders) {
      const res = await signUpPost(signUpRequest(ip, uniqueEmail("flood")));
      expect(res.status).toBe(429);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.message).toMatch(/^Too many sign-ups from your network\. Try again in \d+ seconds?\.$/);
      // One a minute for the network: the wait is at most a minute.
      expect(secondsIn(body.message)).toBeLessThanOrEqual(60);
      expect(res.headers.get("retry-after")).toBe(String(secondsIn(body.message)));
    }

    const email = uniqueEmail("newcomer");
    const res = await signUpPost(signUpRequest("2001:db8:5b::1", email));
    expect(res.status).toBe(201);
    expect(await db().user.count({ where: { email } })).toBe(1);
  });
});
