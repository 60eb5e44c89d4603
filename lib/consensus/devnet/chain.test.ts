import { bech32 } from "@scure/base";
import { describe, expect, it } from "vitest";
import { devnetChain } from "./chain";

/** Valid Bech32 strings from BIP-173 (https://github.com/bitcoin/bips/blob/master/bip-0173.mediawiki#test-vectors). */
const BIP173_VALID = [
  "a12uel5l",
  "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
  "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
  "11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j",
  "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
];

describe("devnet account addresses (Bech32, BIP-173)", () => {
  it.each(BIP173_VALID)("re-encodes the BIP-173 vector %s", (text) => {
    const { prefix, words } = bech32.decode(text as `${string}1${string}`, 200);
    expect(bech32.encode(prefix, words, 200)).toBe(text);
  });

  it("encodes bytes as 5-bit words the way BIP-173 segwit addresses do", () => {
    // P2WPKH example from BIP-173: witness version 0, then the 20-byte program.
    const program = Buffer.from("751e76e8199196d454941c45d1b3a323f1433bd6", "hex");
    expect(bech32.encode("bc", [0, ...bech32.toWords(program)])).toBe("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4");
    expect(bech32.encodeFromBytes("bc", program)).toBe(bech32.encode("bc", bech32.toWords(program)));
  });

  it("keeps the addresses a devnet has always had", () => {
    const chain = devnetChain("babylon-devnet", "bbn-devnet-1");
    expect(chain.accounts).toHaveLength(40);
    expect(chain.accounts[0]).toBe("bbn1vcf8qxatja6r75uhax9evp08hn38wa3zkzfghv");
    expect(chain.accounts[39]).toBe("bbn1rl34q7qes80n700zv020j5gtc6zfcj65xdkf99");
    // The same validators, in the order CometBFT keeps a set (by address).
    expect(chain.validatorOperators).toContain("bbnvaloper147kc677ehqwhkdrc68hxxjp8vxyyjgcmt2m4uf");
    expect(chain.validators.map((v) => v.keys.address)).toEqual(chain.validators.map((v) => v.keys.address).sort());
    for (const address of chain.accounts) expect(bech32.decodeToBytes(address).bytes).toHaveLength(20);
  });
});
