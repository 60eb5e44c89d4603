// The signing module against the npm `standardwebhooks` library, the reference implementation of
// the Standard Webhooks specification.
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { bodySignature, signatureHeaders, signingKeyBytes, standardSignature, verifyStandardSignature } from "./signing";

const key = `whsec_${Buffer.from("a 32-byte secret for the tests!!").toString("base64")}`;
const body = '{"subscriptionId":"wh_1","sequenceNumber":"7","event":{"message":{"number":1}}}';
const id = "msg_2qs5XnZ8sFJ1cJ4rLkJf2a";
const when = new Date("2026-11-24T09:42:02.123Z");

describe("webhook signing", () => {
  it("signs exactly as standardwebhooks does, and those headers verify with it", () => {
    const h = signatureHeaders(key, id, body, when);
    expect(h["webhook-id"]).toBe(id);
    expect(h["webhook-timestamp"]).toBe(String(Math.floor(when.getTime() / 1000)));
    expect(h["webhook-signature"]).toBe(new Webhook(key).sign(id, when, body));
    expect(h["webhook-signature"]).toBe(standardSignature(signingKeyBytes(key), id, Math.floor(when.getTime() / 1000), Buffer.from(body)));
    const fresh = signatureHeaders(key, id, body);
    expect(new Webhook(key).verify(body, fresh)).toEqual(JSON.parse(body));
  });

  it("x-signature is the hex HMAC-SHA256 of the raw body keyed with the decoded key bytes", () => {
    expect(signingKeyBytes(key).toString()).toBe("a 32-byte secret for the tests!!");
    expect(bodySignature(signingKeyBytes(key), body)).toMatch(/^[0-9a-f]{64}$/);
    expect(signatureHeaders(key, id, body, when)["x-signature"]).toBe(bodySignature(signingKeyBytes(key), Buffer.from(body)));
  });

  it("verifies what standardwebhooks signs, one of several signatures, and refuses the rest", () => {
    const now = new Date();
    const ts = String(Math.floor(now.getTime() / 1000));
    const signature = new Webhook(key).sign(id, now, body);
    const other = new Webhook(`whsec_${Buffer.alloc(32, 9).toString("base64")}`).sign(id, now, body);
    const headers = (sig: string, t = ts, i = id) => ({ "webhook-id": i, "webhook-timestamp": t, "webhook-signature": sig });
    expect(verifyStandardSignature(key, headers(signature), body, now)).toBe(true);
    expect(verifyStandardSignature(key, headers(`${other} ${signature}`), body, now)).toBe(true);
    expect(verifyStandardSignature(key, headers(other), body, now)).toBe(false);
    expect(verifyStandardSignature(key, headers(signature), body.replace("7", "8"), now)).toBe(false);
    expect(verifyStandardSignature(key, headers(signature, ts, "msg_other"), body, now)).toBe(false);
    expect(verifyStandardSignature(key, headers(signature), body, new Date(now.getTime() + 6 * 60_000))).toBe(false);
    expect(verifyStandardSignature(key, headers(signature, "soon"), body, now)).toBe(false);
    expect(verifyStandardSignature(key, { "webhook-id": id, "webhook-timestamp": ts }, body, now)).toBe(false);
  });
});
