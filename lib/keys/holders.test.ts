/**
 * A key held past its request, by any holder (here a plain object, as a future streaming interface
 * would be): renewed while the key admits it, refused once it does not, forgotten once released.
 * The CometBFT WebSocket's suite (lib/consensus/cometbft/websocket-keys.test.ts) covers the socket.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db, disconnectDb } from "@/lib/db/client";
import { componentLogger } from "@/lib/log";
import { connectTestDatabase, createTestProject } from "@/lib/testing/harness";
import { KeyHolders, type KeyHolder } from "./holders";
import { hashKey } from "./secret";
import { KeyVerifier, type KeyPrincipal } from "./verifier";

beforeAll(async () => {
  await connectTestDatabase();
});
afterAll(async () => disconnectDb());

const waitFor = async (what: string, done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!done()) throw new Error(`timed out waiting for ${what}`);
};

describe("keys held past their request", () => {
  it("renews a holder while its key admits it, refuses it by its allowlist or revocation, and forgets it once released", async () => {
    const verifier = new KeyVerifier({ cacheTtlMs: 60_000 });
    const holders = new KeyHolders(componentLogger("test"), { recheckRetryMs: 10, recheckRetryMaxMs: 10 }, () => verifier);
    const p = await createTestProject("Key holders", "ENTERPRISE");
    const hash = hashKey(p.apiKey);
    const first = (await verifier.verify(p.apiKey)) as KeyPrincipal;
    const heard: string[] = [];
    const holder: KeyHolder & { principal: KeyPrincipal } = {
      principal: first,
      origin: "https://app.example.com",
      address: () => "203.0.113.9",
      renewed(principal) {
        this.principal = principal;
        heard.push("renewed");
      },
      refused: (reason) => heard.push(reason),
    };
    const release = holders.hold(holder, holders.admit(first));
    expect(heard).toEqual([]);

    // Its origin is listed: renewed with the lists, one lookup for the key.
    await db().apiKey.update({ where: { hash }, data: { allowedOrigins: ["https://app.example.com"] } });
    verifier.forget(hash);
    await waitFor("the renewal", () => heard.length === 1);
    expect(heard).toEqual(["renewed"]);
    expect(holder.principal.allow).toBeDefined();

    // Its address is not among the ones listed now.
    await db().apiKey.update({ where: { hash }, data: { allowedIps: ["198.51.100.0/24"] } });
    verifier.forget(hash);
    await waitFor("the refusal", () => heard.length === 2);
    expect(heard[1]).toBe("address no longer allowed by this key's allowlist");

    await db().apiKey.update({ where: { hash }, data: { allowedOrigins: [], allowedIps: [], revokedAt: new Date() } });
    verifier.forget(hash);
    await waitFor("the revocation", () => heard.length === 3);
    expect(heard[2]).toBe("API key revoked");

    release();
    verifier.forget(hash);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard).toHaveLength(3);
  });

  it("refuses to hold a principal the verifier did not answer: it could never be refused later", () => {
    const holders = new KeyHolders(componentLogger("test"), { recheckRetryMs: 10, recheckRetryMaxMs: 10 }, () => new KeyVerifier({ cacheTtlMs: 0 }));
    expect(() => holders.admit({ keyId: "key_x", projectId: "prj_x", plan: "FREE", overage: false, ownerId: "usr_x" })).toThrow(expect.objectContaining({ code: "INTERNAL_SERVER_ERROR" }));
  });
});
