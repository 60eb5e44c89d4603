// Sign-ups over the budget (SIGN_UP_FREE_PER_HOUR): nobody is refused for what other networks do,
// every new sign-up brings a proof of work instead. A file of its own: it sets a small budget, and
// a small limit per address.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as challengeGet } from "@/app/api/sign-up/challenge/route";
import { POST as signUpPost } from "@/app/api/sign-up/route";
import { CLIENT_IP_HEADER } from "@/lib/client-ip";
import { db, disconnectDb } from "@/lib/db/client";
import { connectTestDatabase, uniqueEmail } from "@/lib/testing/harness";
import { solveChallenge } from "./proof-of-work";

beforeAll(async () => {
  // 60 an hour: 10 at once, then one a minute, so the budget stays used up for the whole file.
  process.env.SIGN_UP_FREE_PER_HOUR = "60";
  process.env.SIGN_UP_PER_ADDRESS_PER_HOUR = "3";
  await connectTestDatabase();
});
afterAll(async () => disconnectDb());

const PASSWORD = "the right password";

function signUp(address: string, email: string, proof?: { challenge: string; nonce: string }): Promise<Response> {
  return signUpPost(
    new Request("http://localhost:3000/api/sign-up", {
      method: "POST",
      headers: { "Content-Type": "application/json", [CLIENT_IP_HEADER]: address },
      body: JSON.stringify({ email, password: PASSWORD, proof }),
    }),
  );
}

async function challenge(): Promise<{ challenge: string | null; difficulty: number; expiresAt: string | null }> {
  const res = await challengeGet(new Request("http://localhost:3000/api/sign-up/challenge"));
  expect(res.status).toBe(200);
  expect(res.headers.get("cache-control")).toBe("no-store");
  return (await res.json()) as { challenge: string | null; difficulty: number; expiresAt: string | null };
}

describe("sign-ups over the budget", () => {
  it("need no proof within the budget, and an address gets SIGN_UP_PER_ADDRESS_PER_HOUR of them", async () => {
    expect(await challenge()).toEqual({ challenge: null, difficulty: 0, expiresAt: null });
    for (let i = 0; i < 3; i++) expect((await signUp("192.0.2.1", uniqueEmail("free"))).status).toBe(201);
    const fourth = await signUp("192.0.2.1", uniqueEmail("free"));
    expect(fourth.status).toBe(429);
    // The address's 3 per hour refill one every 1,200 s, counted from its first sign-up: on a loaded
    // machine seconds have passed since then.
    const wait = Number(fourth.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(1_140);
    expect(wait).toBeLessThanOrEqual(1_200);
    expect(((await fourth.json()) as { message: string }).message).toBe(`Too many sign-ups from your network. Try again in ${wait} seconds.`);
  });

  it("ask flooding networks and a new address alike for a proof of work, and take the new address's once solved", async () => {
    // 20 networks flood until the budget is used up; then none of them gets an account without a proof.
    const flooders = Array.from({ length: 20 }, (_, i) => `2001:db8:${(0x100 + i).toString(16)}::1`);
    const statuses: number[] = [];
    for (const ip of flooders) statuses.push((await signUp(ip, uniqueEmail("flood"))).status);
    expect(statuses).toEqual([...Array<number>(7).fill(201), ...Array<number>(13).fill(400)]);

    const email = uniqueEmail("newcomer");
    const bare = await signUp("198.51.100.7", email);
    expect(bare.status).toBe(400);
    expect(await bare.json()).toEqual({
      code: "MISSING_REQUIRED_PARAMETER",
      message: "proof: Many sign-ups are arriving right now. Fetch a challenge from GET /api/sign-up/challenge, solve it, and send it as proof.",
    });
    expect(await db().user.count({ where: { email } })).toBe(0);

    const issued = await challenge();
    expect(issued.difficulty).toBe(18);
    expect(Date.parse(issued.expiresAt!)).toBeGreaterThan(Date.now());
    const proof = { challenge: issued.challenge!, nonce: await solveChallenge(issued.challenge!, issued.difficulty) };
    const res = await signUp("198.51.100.7", email, proof);
    expect(res.status).toBe(201);
    expect(await db().user.count({ where: { email } })).toBe(1);

    // A proof is good for one account.
    const again = uniqueEmail("again");
    const reused = await signUp("198.51.100.8", again, proof);
    expect(reused.status).toBe(400);
    expect(((await reused.json()) as { message: string }).message).toMatch(/^proof: This challenge was already used\./);
    expect(await db().user.count({ where: { email: again } })).toBe(0);
  });
});
