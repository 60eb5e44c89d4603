import { describe, expect, it } from "vitest";
import { ApiError } from "@/components/api-client";
import { conditionText, createResolver, EMPTY_CONDITION, serverFieldError, updateBody, updateResolver, type WebhookFormValues } from "./form";

const TOPIC0 = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

const log = (condition: Partial<WebhookFormValues["condition"]> = {}, rest: Partial<WebhookFormValues> = {}): WebhookFormValues => ({
  eventType: "LOG",
  network: "ethereum-mainnet",
  description: "Transfers",
  notification: { webhookUrl: "https://example.com/hook" },
  isInstant: false,
  isActive: true,
  condition: { ...EMPTY_CONDITION, address: "0x5FbDB2315678afecb367f032d93F642f64180aa3", topics: [TOPIC0, "", "", ""], ...condition },
  ...rest,
});

const resolve = (v: WebhookFormValues) => createResolver(v, undefined, { fields: {}, shouldUseNativeValidation: false });

describe("the builder's resolver (the API's create schema)", () => {
  it("turns the text into the API's body: trailing empty topics dropped, the address lower-cased", async () => {
    const result = await resolve(log({ topics: [TOPIC0, "", `0x${"0".repeat(24)}70997970c51812dc3a010c7d01b50e0d17dc79c8`, ""] }));
    expect(result.errors).toEqual({});
    expect(result.values).toEqual({
      eventType: "LOG",
      description: "Transfers",
      notification: { webhookUrl: "https://example.com/hook" },
      isInstant: false,
      condition: { address: "0x5fbdb2315678afecb367f032d93f642f64180aa3", topics: [TOPIC0, null, `0x${"0".repeat(24)}70997970c51812dc3a010c7d01b50e0d17dc79c8`] },
    });
  });

  it("puts the schema's messages on the fields, capitalised", async () => {
    const result = await resolve(log({ address: "0x12", topics: ["", "0x1", "", ""] }, { description: " ", notification: { webhookUrl: "ftp://x" } }));
    expect(result.errors.condition?.address?.message).toBe("Must be a contract address: 0x followed by 40 hex digits (20 bytes)");
    expect(result.errors.condition?.topics?.[0]?.message).toBe("Must be the Keccak-256 hash of the event signature; only topics[1] to topics[3] may be null");
    expect(result.errors.condition?.topics?.[1]?.message).toMatch(/^Must be a topic: 0x followed by 64 hex digits/);
    expect(result.errors.description?.message).toBe("Must not be empty");
    expect(result.errors.notification?.webhookUrl?.message).toBe("Must be an absolute http:// or https:// URL, such as https://example.com/hooks");
  });

  it("refuses an event type the network does not support, and a period that is not a whole number", async () => {
    const period = await resolve(log({ period: "1.5" }, { eventType: "BLOCK_PERIOD", network: "aptos-testnet" }));
    expect(period.errors.condition?.period?.message).toBe("Must be a whole number of blocks from 1 to 1,000,000");
    const missing = await resolve(log({ period: "" }, { eventType: "BLOCK_PERIOD" }));
    expect(missing.errors.condition?.period?.message).toBe("Is required");
    const unknownNetwork = await resolve(log({}, { network: "babylon-mainnet" }));
    expect(unknownNetwork.errors.network?.message).toBe("Choose a network");
  });

  it("checks TRANSACTION's rules and eventData's JSON and depth", async () => {
    const tx = (c: Partial<WebhookFormValues["condition"]>) => resolve(log(c, { eventType: "TRANSACTION", network: "aptos-mainnet" }));
    expect((await tx({})).errors.condition?.payloadFunction?.message).toBe("Is required unless eventType and eventAccountAddress are both set");
    expect((await tx({ eventType: "0x1::coin::CoinDeposit" })).errors.condition?.eventAccountAddress?.message).toMatch(/^Is required when eventType is set/);
    const badJson = await tx({ eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "0x1", eventData: "{ amount: 1 }" });
    expect(badJson.errors.condition?.eventData?.message).toMatch(/^Is not valid JSON: /);
    const deep = await tx({ eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "0x1", eventData: '{"a":{"b":{"c":{"d":1}}}}' });
    expect(deep.errors.condition?.eventData?.message).toBe("May nest at most 3 levels deep");
    const ok = await tx({ payloadFunction: "0x1::aptos_account::transfer", eventData: "" });
    expect(ok.errors).toEqual({});
    expect(ok.values).toMatchObject({ condition: { payloadFunction: "0x1::aptos_account::transfer", eventType: null, eventAccountAddress: null, eventData: null } });
  });
});

describe("the edit form", () => {
  const record = log();

  it("sends only what changed", () => {
    expect(updateBody({ ...record, description: "Renamed" }, record).body).toEqual({ description: "Renamed" });
    expect(updateBody({ ...record, isActive: false }, record).body).toEqual({ isActive: false });
    expect(updateBody({ ...record, condition: { ...record.condition, topics: [TOPIC0, "", "", `0x${"1".repeat(64)}`] } }, record).body).toEqual({
      condition: { address: record.condition.address, topics: [TOPIC0, null, null, `0x${"1".repeat(64)}`] },
    });
  });

  it("says when nothing changed, and judges changes with the update schema", async () => {
    const resolver = updateResolver(record);
    const opts = { fields: {}, shouldUseNativeValidation: false } as const;
    expect((await resolver(record, undefined, opts)).errors.root?.message).toBe("Nothing changed: edit a field first.");
    expect((await resolver({ ...record, notification: { webhookUrl: "nope" } }, undefined, opts)).errors.notification?.webhookUrl?.message).toMatch(/^Must be an absolute/);
  });

  it("fills the form from a record's event", () => {
    expect(conditionText("LOG", { targetAddress: "0xabc", topics: [TOPIC0, null], messages: [] })).toMatchObject({ address: "0xabc", topics: [TOPIC0, "", "", ""] });
    expect(conditionText("BLOCK_PERIOD", { period: 10, message: null }).period).toBe("10");
    expect(conditionText("TRANSACTION", { payloadFunction: null, eventType: "0x1::coin::CoinDeposit", eventAccountAddress: "0x1", eventData: { a: 1 } })).toMatchObject({
      payloadFunction: "",
      eventType: "0x1::coin::CoinDeposit",
      eventData: '{\n  "a": 1\n}',
    });
  });
});

describe("serverFieldError", () => {
  it("puts a 400 naming a field on that field, and leaves other errors to the form", () => {
    expect(serverFieldError(new ApiError(400, "INVALID_PARAMETER", "condition.topics[1] must be a topic: 0x followed by 64 hex digits."))).toEqual({
      name: "condition.topics.1",
      message: "Must be a topic: 0x followed by 64 hex digits",
    });
    expect(serverFieldError(new ApiError(400, "INVALID_PARAMETER", "notification.webhookUrl points to a private address (10.0.0.1)."))).toEqual({
      name: "notification.webhookUrl",
      message: "Points to a private address (10.0.0.1)",
    });
    expect(serverFieldError(new ApiError(400, "INVALID_PARAMETER", "network must be a network with webhooks."))).toBeNull();
    expect(serverFieldError(new ApiError(503, "UNAVAILABLE", "description is down."))).toBeNull();
  });
});
