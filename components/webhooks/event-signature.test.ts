import { describe, expect, it } from "vitest";
import { DEVNET_CONTRACTS } from "@/lib/evm/devnet/contracts";
import { parseEventSignature, topicSupported, valueToTopic } from "./event-signature";

describe("parseEventSignature", () => {
  it("computes topic0 and lists the indexed parameters of Transfer", () => {
    const parsed = parseEventSignature("Transfer(address indexed from, address indexed to, uint256 value)");
    expect(parsed).toEqual({
      event: {
        name: "Transfer",
        canonical: "Transfer(address,address,uint256)",
        topic0: DEVNET_CONTRACTS.token.events.Transfer.topic0,
        indexed: [
          { topic: 1, name: "from", type: "address" },
          { topic: 2, name: "to", type: "address" },
        ],
      },
    });
  });

  it("accepts a leading `event`, a trailing semicolon and unnamed parameters", () => {
    const parsed = parseEventSignature("event Ping(address indexed, uint256 indexed round, string note, uint256 value);");
    expect("event" in parsed && parsed.event.canonical).toBe(DEVNET_CONTRACTS.emitter.events.Ping.signature);
    expect("event" in parsed && parsed.event.topic0).toBe(DEVNET_CONTRACTS.emitter.events.Ping.topic0);
    expect("event" in parsed && parsed.event.indexed.map((p) => p.name)).toEqual(["param0", "round"]);
  });

  it("explains what is wrong with bad input", () => {
    expect(parseEventSignature("")).toEqual({ error: expect.stringContaining("Enter an event signature") });
    expect(parseEventSignature("Transfer(address from")).toEqual({ error: expect.stringContaining("Not a valid event signature") });
    expect(parseEventSignature("X(uint8 indexed a, uint8 indexed b, uint8 indexed c, uint8 indexed d)")).toEqual({ error: "An event has at most 3 indexed parameters." });
  });
});

describe("valueToTopic", () => {
  it("pads an address to 32 bytes, lower case", () => {
    expect(valueToTopic("address", " 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266 ")).toEqual({
      topic: "0x000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266",
    });
  });

  it("encodes integers, booleans and fixed bytes; hashes strings", () => {
    expect(valueToTopic("uint256", "255")).toEqual({ topic: `0x${"0".repeat(62)}ff` });
    expect(valueToTopic("int8", "-1")).toEqual({ topic: `0x${"f".repeat(64)}` });
    expect(valueToTopic("bool", "true")).toEqual({ topic: `0x${"0".repeat(63)}1` });
    expect(valueToTopic("bytes4", "0xdeadbeef")).toEqual({ topic: `0xdeadbeef${"0".repeat(56)}` });
    expect(valueToTopic("string", "hello")).toEqual({ topic: "0x1c8aff950685c2ed4bc3174f3472287b56d9517b9c948127319a09a7a36deac8" });
  });

  it("leaves an empty value as any (null)", () => {
    expect(valueToTopic("address", "  ")).toEqual({ topic: null });
  });

  it("names the problem with a bad value", () => {
    expect(valueToTopic("address", "0x123")).toEqual({ error: "must be an address: 0x followed by 40 hex digits" });
    expect(valueToTopic("uint8", "256")).toEqual({ error: "is out of range for uint8" });
    expect(valueToTopic("uint256", "1.5")).toEqual({ error: expect.stringContaining("whole number") });
    expect(valueToTopic("bytes4", "0xdead")).toEqual({ error: "must be 4 bytes: 0x followed by 8 hex digits" });
    expect(topicSupported("uint256[]")).toBe(false);
  });
});
