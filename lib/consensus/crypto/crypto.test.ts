import { describe, expect, it } from "vitest";
import {
  BLOCK_PART_SIZE_BYTES,
  SignedMsgType,
  addressFromPublicKey,
  bytesEqual,
  commitHash,
  computeRootFromAunts,
  consensusParamsHash,
  concatBytes,
  dataHash,
  emptyHash,
  encodeCommitSig,
  encodeDeterministicExecTxResult,
  encodeHeaderFields,
  formatTimestamp,
  fromBase64,
  fromHex,
  headerHash,
  innerHash,
  keyPairFromSeed,
  leafHash,
  merkleProof,
  merkleProofs,
  merkleRoot,
  parseTimestamp,
  partSetHeader,
  publicKeyBytes,
  publicKeyFromBytes,
  publicKeyJson,
  resultsHash,
  seedFromLabel,
  sha256,
  signBytes,
  signVote,
  splitPoint,
  timestampFromDate,
  toBase64,
  toHex,
  txHash,
  txProof,
  txProofs,
  utf8,
  verifyMerkleProof,
  verifySignature,
  verifyTxProof,
  verifyVote,
  voteSignBytes,
  zeroBlockId,
  type BlockHeader,
  type TxProof,
  type VoteToSign,
} from "./index";

const EMPTY_SHA256 = "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855";

const bytes = (...values: number[]) => Uint8Array.from(values);
const items = (n: number) => Array.from({ length: n }, (_, i) => utf8(`item-${i}`));
const txs = (n: number) => Array.from({ length: n }, (_, i) => utf8(`tx ${i}: ${"x".repeat(i % 7)}`));
const hashOf = (text: string) => toHex(sha256(utf8(text)));
const flipByte = (data: Uint8Array, at = 0) => {
  const copy = Uint8Array.from(data);
  copy[at] = (copy[at] ?? 0) ^ 0x01;
  return copy;
};
const flipBase64 = (text: string, at = 0) => toBase64(flipByte(fromBase64(text), at));
const clone = <T>(value: T): T => structuredClone(value);

describe("hex and base64", () => {
  it("round-trips and prints upper-case hex", () => {
    const data = bytes(0, 1, 0xab, 0xff);
    expect(toHex(data)).toBe("0001ABFF");
    expect(fromHex("0001abff")).toEqual(data);
    expect(toHex(new Uint8Array(0))).toBe("");
    expect(fromBase64(toBase64(data))).toEqual(data);
    expect(toBase64(utf8("abcd"))).toBe("YWJjZA==");
  });

  it("rejects malformed and non-canonical input", () => {
    expect(() => fromHex("ABC")).toThrow(TypeError);
    expect(() => fromHex("ZZ")).toThrow(TypeError);
    expect(() => fromBase64("YWJjZA")).toThrow(TypeError); // missing padding
    expect(() => fromBase64("YWJj ZA==")).toThrow(TypeError);
    expect(() => fromBase64("YWJjZB==")).toThrow(TypeError); // stray bits in the last character
    expect(() => fromBase64("-_8=")).toThrow(TypeError); // URL alphabet
  });

  it("concatenates and compares", () => {
    expect(concatBytes(bytes(1), new Uint8Array(0), bytes(2, 3))).toEqual(bytes(1, 2, 3));
    expect(bytesEqual(bytes(1, 2), bytes(1, 2))).toBe(true);
    expect(bytesEqual(bytes(1, 2), bytes(1, 3))).toBe(false);
    expect(bytesEqual(bytes(1), bytes(1, 0))).toBe(false);
  });
});

describe("merkle", () => {
  it("hashes with RFC 6962 prefixes", () => {
    expect(toHex(sha256())).toBe(EMPTY_SHA256);
    expect(toHex(sha256(utf8("ab"), utf8("c")))).toBe(toHex(sha256(utf8("abc"))));
    expect(leafHash(utf8("a"))).toEqual(sha256(bytes(0), utf8("a")));
    expect(innerHash(utf8("l"), utf8("r"))).toEqual(sha256(bytes(1), utf8("l"), utf8("r")));
  });

  it("splits at the largest power of two strictly below n", () => {
    const cases: [number, number][] = [[1, 0], [2, 1], [3, 2], [4, 2], [5, 4], [7, 4], [8, 4], [9, 8], [16, 8], [17, 16], [100, 64]];
    for (const [n, k] of cases) expect(splitPoint(n)).toBe(k);
    expect(() => splitPoint(0)).toThrow(RangeError);
    expect(() => splitPoint(1.5)).toThrow(RangeError);
  });

  it("matches CometBFT's HashFromByteSlices test vectors", () => {
    // crypto/merkle/tree_test.go, TestHashFromByteSlices
    expect(toHex(merkleRoot([])).toLowerCase()).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(toHex(merkleRoot([bytes(1, 2, 3)])).toLowerCase()).toBe("054edec1d0211f624fed0cbca9d4f9400b0e491c43742af2c5b0abebf0c990d8");
    expect(toHex(merkleRoot([bytes()])).toLowerCase()).toBe("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
    expect(toHex(merkleRoot([bytes(1, 2, 3), bytes(4, 5, 6)])).toLowerCase()).toBe("82e6cfce00453804379b53962939eaa7906b39904be0813fcadd31b100773c4b");
    expect(toHex(merkleRoot([bytes(1, 2), bytes(3, 4), bytes(5, 6), bytes(7, 8), bytes(9, 10)])).toLowerCase()).toBe(
      "f326493eceab4f2d9ffbc78c59432a0a005d6ea98392045c74df5d14a113be18",
    );
  });

  it("computes the empty, single and 3-item roots by hand", () => {
    expect(toHex(merkleRoot([]))).toBe(EMPTY_SHA256);
    expect(toHex(emptyHash())).toBe(EMPTY_SHA256);
    const [a, b, c] = [utf8("a"), utf8("b"), utf8("c")];
    expect(merkleRoot([a])).toEqual(sha256(bytes(0x00), a));
    // 3 items: split at 2 → inner(inner(leaf a, leaf b), leaf c)
    const la = sha256(bytes(0), a);
    const lb = sha256(bytes(0), b);
    const lc = sha256(bytes(0), c);
    const expected = sha256(bytes(1), sha256(bytes(1), la, lb), lc);
    expect(merkleRoot([a, b, c])).toEqual(expected);
    // 5 items: split at 4 → inner(root(first 4), leaf e)
    const five = items(5);
    expect(merkleRoot(five)).toEqual(innerHash(merkleRoot(five.slice(0, 4)), leafHash(five[4] ?? bytes())));
  });

  it("has no proofs for an empty list", () => {
    expect(() => merkleProof([], 0)).toThrow(RangeError);
    expect(merkleProofs([])).toEqual({ rootHash: sha256(), proofs: [] });
  });

  for (const n of [1, 2, 3, 4, 5, 8, 100]) {
    it(`proves and verifies every index of a ${n}-leaf tree`, () => {
      const list = items(n);
      const root = merkleRoot(list);
      const all = merkleProofs(list);
      expect(all.rootHash).toEqual(root);
      expect(all.proofs).toHaveLength(n);
      for (let i = 0; i < n; i++) {
        const proof = merkleProof(list, i);
        expect(proof.total).toBe(n);
        expect(proof.index).toBe(i);
        expect(proof.rootHash).toEqual(root);
        expect(proof.leafHash).toEqual(leafHash(list[i] ?? bytes()));
        expect(proof.aunts.length).toBeLessThanOrEqual(Math.ceil(Math.log2(n)));
        expect(all.proofs[i]).toEqual(proof);
        expect(computeRootFromAunts(i, n, proof.leafHash, proof.aunts)).toEqual(root);
        expect(verifyMerkleProof(root, list[i] ?? bytes(), proof)).toBe(true);
        // wrong item, wrong root
        expect(verifyMerkleProof(root, utf8("other"), proof)).toBe(false);
        expect(verifyMerkleProof(flipByte(root), list[i] ?? bytes(), proof)).toBe(false);
      }
    });
  }

  it("rejects index/aunt inconsistencies like computeHashFromAunts", () => {
    const list = items(5);
    const { leafHash: leaf, aunts } = merkleProof(list, 2);
    expect(computeRootFromAunts(5, 5, leaf, aunts)).toBeNull();
    expect(computeRootFromAunts(-1, 5, leaf, aunts)).toBeNull();
    expect(computeRootFromAunts(0, 0, leaf, [])).toBeNull();
    expect(computeRootFromAunts(2, 5, leaf, aunts.slice(1))).toBeNull();
    expect(computeRootFromAunts(2, 5, leaf, [...aunts, leaf])).toBeNull();
    expect(computeRootFromAunts(0, 1, leaf, [leaf])).toBeNull();
    expect(computeRootFromAunts(0, 1, leaf, [])).toEqual(leaf);
  });
});

describe("transactions", () => {
  it("hashes a tx as upper-case SHA-256", () => {
    expect(txHash(utf8("abc"))).toBe("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD");
    expect(txHash(new Uint8Array(0))).toBe(EMPTY_SHA256);
  });

  it("computes data_hash over the tx hashes", () => {
    expect(dataHash([])).toBe(EMPTY_SHA256);
    const [t0, t1, t2] = txs(3) as [Uint8Array, Uint8Array, Uint8Array];
    expect(dataHash([t0])).toBe(toHex(sha256(bytes(0), sha256(t0))));
    const leaf = (tx: Uint8Array) => sha256(bytes(0), sha256(tx));
    expect(dataHash([t0, t1, t2])).toBe(toHex(sha256(bytes(1), sha256(bytes(1), leaf(t0), leaf(t1)), leaf(t2))));
    // the items are the tx hashes, not the txs
    expect(dataHash([t0, t1])).not.toBe(toHex(merkleRoot([t0, t1])));
    expect(dataHash([t0, t1])).toBe(toHex(merkleRoot([sha256(t0), sha256(t1)])));
  });

  it("verifies single-tx proofs returned by real Tendermint nodes", () => {
    // Binance Chain /tx_search?prove=true (Tendermint 0.32) and a CometBFT devnet /tx?prove=true.
    const binance: TxProof = {
      RootHash: "07CB13893EE47F9BAC752B6F0353D9D4BE244E4403D4C1D67D828282B08E4296",
      Data: "4QHwYl3uCmfObcBDChTpOvolH1oe67jjc93FA5QwJpSiIBIvRTkzQUZBMjUxRjVBMUVFQkI4RTM3M0REQzUwMzk0MzAyNjk0QTIyMC0xMDY1MzEaC1pDQi1GMDBfQk5CIAIoATD8HjiAqNa5B0ABEnIKJuta6YchAv+Fh/6SCT/nXtoa/c4s1p3cvs0B6EH24jX94NocvGBdEkCXzbtnnErlbokeOUQlZyb0kvegAWpm/Zc12dgdz7Qa/T39gYFOzZF2bLEanu1TZagIuK53qEvN96xO0Fs1U+btGPanKiCiwAY=",
      Proof: { total: "1", index: "0", leaf_hash: "B8sTiT7kf5usdStvA1PZ1L4kTkQD1MHWfYKCgrCOQpY=", aunts: [] },
    };
    const devnet: TxProof = {
      RootHash: "D27A3C02E3618E16982ED008703381BB43A84C44A12ECE2600E271200E42099E",
      Data: "CAEQgPyK2JuJ3qAXGAMiFCkDarANGLG3J0RIL1oJ/d6MbxluKhSNxBqGuR64jYJInE0Deun/ymXPvzIBAToBCkABUkGJEiY4/vDieToPP7oY+piEaQ2PGslX+xQ36bKC90kJwEqudYvRGOfzJPJfvs7fxh6ckP5nSf0fCQWUVXH4Ng0FAA==",
      Proof: { total: "1", index: "0", leaf_hash: "0no8AuNhjhaYLtAIcDOBu0OoTEShLs4mAOJxIA5CCZ4=", aunts: [] },
    };
    for (const proof of [binance, devnet]) {
      expect(verifyTxProof(proof)).toBe(true);
      expect(txProof([fromBase64(proof.Data)], 0)).toEqual(proof);
    }
  });

  it("has no proofs for an empty block", () => {
    expect(() => txProof([], 0)).toThrow(RangeError);
    expect(txProofs([])).toEqual([]);
  });

  for (const n of [1, 2, 3, 4, 5, 8, 100]) {
    it(`proves and verifies every tx of a ${n}-tx block`, () => {
      const block = txs(n);
      const root = dataHash(block);
      const all = txProofs(block);
      for (let i = 0; i < n; i++) {
        const tx = block[i] ?? bytes();
        const proof = txProof(block, i);
        expect(Object.keys(proof)).toEqual(["RootHash", "Data", "Proof"]);
        expect(Object.keys(proof.Proof)).toEqual(["total", "index", "leaf_hash", "aunts"]);
        expect(proof.RootHash).toBe(root);
        expect(proof.Data).toBe(toBase64(tx));
        expect(proof.Proof.total).toBe(String(n));
        expect(proof.Proof.index).toBe(String(i));
        expect(proof.Proof.leaf_hash).toBe(toBase64(sha256(bytes(0), sha256(tx))));
        expect(all[i]).toEqual(proof);
        expect(verifyTxProof(proof)).toBe(true);
        expect(verifyTxProof(proof, tx)).toBe(true);
        expect(verifyTxProof(proof, tx, root)).toBe(true);
        expect(verifyTxProof(proof, tx, root.toLowerCase())).toBe(true);
        expect(verifyTxProof(JSON.parse(JSON.stringify(proof)) as TxProof, tx)).toBe(true);

        // a changed tx: in Data, or a different tx to check against
        expect(verifyTxProof({ ...proof, Data: flipBase64(proof.Data) })).toBe(false);
        expect(verifyTxProof(proof, flipByte(tx, tx.length - 1))).toBe(false);
        // a changed root, or a different expected data_hash
        expect(verifyTxProof({ ...proof, RootHash: toHex(flipByte(fromHex(root), 31)) })).toBe(false);
        expect(verifyTxProof(proof, tx, toHex(flipByte(fromHex(root))))).toBe(false);
        // a changed leaf hash
        expect(verifyTxProof({ ...proof, Proof: { ...proof.Proof, leaf_hash: flipBase64(proof.Proof.leaf_hash, 5) } })).toBe(false);
        // every other index fails (the index fixes the path's left/right turns)
        for (let j = 0; j < n; j++) {
          if (j !== i) expect(verifyTxProof({ ...proof, Proof: { ...proof.Proof, index: String(j) } })).toBe(false);
        }
        expect(verifyTxProof({ ...proof, Proof: { ...proof.Proof, index: String(n) } })).toBe(false);
        // every aunt, one byte changed; an aunt added or removed
        proof.Proof.aunts.forEach((aunt, k) => {
          const aunts = [...proof.Proof.aunts];
          aunts[k] = flipBase64(aunt, k % 32);
          expect(verifyTxProof({ ...proof, Proof: { ...proof.Proof, aunts } })).toBe(false);
        });
        expect(verifyTxProof({ ...proof, Proof: { ...proof.Proof, aunts: [...proof.Proof.aunts, proof.Proof.leaf_hash] } })).toBe(false);
        if (proof.Proof.aunts.length > 0) {
          expect(verifyTxProof({ ...proof, Proof: { ...proof.Proof, aunts: proof.Proof.aunts.slice(1) } })).toBe(false);
        }
      }
    });
  }

  it("returns false, never throws, on malformed proofs", () => {
    const block = txs(5);
    const proof = txProof(block, 3);
    const withProof = (patch: Partial<TxProof["Proof"]>): TxProof => ({ ...proof, Proof: { ...proof.Proof, ...patch } });
    const bad: TxProof[] = [
      withProof({ index: "-1" }),
      withProof({ index: "03" }),
      withProof({ index: "3.0" }),
      withProof({ index: "" }),
      withProof({ total: "0" }),
      withProof({ total: "3" }), // index ≥ total
      withProof({ total: "99999999999999999999" }),
      withProof({ leaf_hash: "not base64!" }),
      withProof({ leaf_hash: toBase64(bytes(1, 2, 3)) }),
      withProof({ aunts: ["%%%"] }),
      withProof({ aunts: [toBase64(bytes(1))] }),
      withProof({ aunts: Array.from({ length: 101 }, () => proof.Proof.leaf_hash) }),
      { ...proof, RootHash: "XYZ" },
      { ...proof, RootHash: "ABCD" },
      { ...proof, Data: "@@" },
      { ...proof, Data: proof.Data.replace(/=+$/, "") + (proof.Data.endsWith("=") ? "" : "A") },
      { ...proof, Proof: null } as unknown as TxProof,
      withProof({ total: 5 as unknown as string }),
      null as unknown as TxProof,
    ];
    for (const p of bad) expect(verifyTxProof(p, block[3])).toBe(false);
  });
});

const ZERO_HASH = "00".repeat(32);

/** CometBFT types/block_test.go, TestHeaderHash "Generates expected hash". */
const cometHeader = (): BlockHeader => ({
  version: { block: "1", app: "2" },
  chain_id: "chainId",
  height: "3",
  time: "2019-10-13T16:14:44Z",
  last_block_id: { hash: ZERO_HASH, parts: { total: 6, hash: ZERO_HASH } },
  last_commit_hash: hashOf("last_commit_hash"),
  data_hash: hashOf("data_hash"),
  validators_hash: hashOf("validators_hash"),
  next_validators_hash: hashOf("next_validators_hash"),
  consensus_hash: hashOf("consensus_hash"),
  app_hash: hashOf("app_hash"),
  last_results_hash: hashOf("last_results_hash"),
  evidence_hash: hashOf("evidence_hash"),
  proposer_address: hashOf("proposer_address").slice(0, 40),
});

/** A real CometBFT block (height 10818 of a devnet), as returned by /block; its block_id.hash is 97EA6238…A153. */
const realHeader = (): BlockHeader => ({
  version: { block: "11", app: "72057594275268382" },
  chain_id: "devnet0",
  height: "10818",
  time: "2023-06-14T10:17:42.164478437Z",
  last_block_id: {
    hash: "B7F270DE82C5EB38828784923720A7C104F7224294BB52A6E120C065F3572E02",
    parts: { total: 1, hash: "D45611FF960D47A62351181E3D7A1CFECAC773681884BA04614C637C9C2C8166" },
  },
  last_commit_hash: "A5253ABF9ED8F0217F5B5FACFC3B6DB6E14D0FB8CFF8366D0D818914DD712F0A",
  data_hash: EMPTY_SHA256,
  validators_hash: "5B2FCAEBDFD9E6CB6CBE441B1F0060923986C25B910445AEDEC907C12DFC1B5E",
  next_validators_hash: "5B2FCAEBDFD9E6CB6CBE441B1F0060923986C25B910445AEDEC907C12DFC1B5E",
  consensus_hash: "048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F",
  app_hash: "5421B4C31EAE7BC682E6D1D4C3575AA03D1EB152189D59C8034627377665D014",
  last_results_hash: EMPTY_SHA256,
  evidence_hash: EMPTY_SHA256,
  proposer_address: "735DC3FC8BCCFD7810BCC14DB49234C1BCE7758B",
});

/** A first block of a Blockgate devnet: zero last_block_id, empty last commit and app hash. */
const genesisHeader = (): BlockHeader => ({
  version: { block: "11", app: "0" },
  chain_id: "blockgate-devnet-1",
  height: "1",
  time: "2024-05-01T12:00:00.123456789Z",
  last_block_id: zeroBlockId(),
  last_commit_hash: "",
  data_hash: dataHash(txs(3)),
  validators_hash: hashOf("validators"),
  next_validators_hash: hashOf("validators"),
  consensus_hash: hashOf("consensus params"),
  app_hash: "",
  last_results_hash: EMPTY_SHA256,
  evidence_hash: EMPTY_SHA256,
  proposer_address: keyPairFromSeed(seedFromLabel("validator-0")).address,
});

describe("header hash", () => {
  it("matches CometBFT's TestHeaderHash vector", () => {
    expect(headerHash(cometHeader())).toBe("F740121F553B5418C3EFBD343C2DBFE9E007BB67B0D020A0741374BAB65242A4");
  });

  it("matches the block_id of a real CometBFT block", () => {
    expect(headerHash(realHeader())).toBe("97EA623844694395542AA9FEC7155D9601C2C3914E32CF9B83595DCCFB4AA153");
  });

  it("keeps a frozen hash for a fixed first-block header", () => {
    // If this changes, the field encoding changed: blocks already produced would get new hashes.
    expect(headerHash(genesisHeader())).toBe("4A3D4E951B5A7781DCB663700C656A58BC85101F4E2FEF48F13E4AE46579F2D5");
  });

  it("encodes each field as CometBFT does", () => {
    const fields = encodeHeaderFields({ ...cometHeader(), chain_id: "", app_hash: "" }).map((f) => toHex(f));
    expect(fields).toHaveLength(14);
    expect(fields[0]).toBe("08011002"); // Consensus{block: 1, app: 2}
    expect(fields[1]).toBe(""); // empty StringValue
    expect(fields[2]).toBe("0803"); // Int64Value{3}
    expect(fields[3]).toBe("08F49A8DED05"); // Timestamp{seconds: 1570983284}
    expect(fields[4]).toBe(`0A20${ZERO_HASH}12240806${"1220" + ZERO_HASH}`); // BlockID
    expect(fields[6]).toBe(`0A20${hashOf("data_hash")}`); // BytesValue
    expect(fields[10]).toBe(""); // empty BytesValue
    expect(fields[13]).toBe(`0A14${hashOf("proposer_address").slice(0, 40)}`);
    const genesis = encodeHeaderFields(genesisHeader()).map((f) => toHex(f));
    expect(genesis[4]).toBe("1200"); // zero BlockID: the non-nullable part_set_header is still written
    expect(encodeHeaderFields({ ...genesisHeader(), height: "-1" })[2]).toEqual(fromHex("08FFFFFFFFFFFFFFFFFF01"));
  });

  it("is stable and changes with every field", () => {
    const base = genesisHeader();
    const hash = headerHash(base);
    expect(headerHash(clone(base))).toBe(hash);
    expect(headerHash(base)).toBe(hash);
    // hex case and equivalent time spellings do not matter
    expect(headerHash({ ...base, data_hash: base.data_hash.toLowerCase() })).toBe(hash);
    expect(headerHash({ ...base, time: "2024-05-01T14:00:00.123456789+02:00" })).toBe(hash);
    const halfSecond = headerHash({ ...base, time: "2024-05-01T12:00:00.5Z" });
    expect(headerHash({ ...base, time: "2024-05-01T12:00:00.500000000Z" })).toBe(halfSecond);

    const variants: [string, (h: BlockHeader) => void][] = [
      ["version.block", (h) => (h.version.block = "12")],
      ["version.app", (h) => (h.version.app = "1")],
      ["chain_id", (h) => (h.chain_id = "blockgate-devnet-2")],
      ["height", (h) => (h.height = "2")],
      ["time (1 ns)", (h) => (h.time = "2024-05-01T12:00:00.12345679Z")],
      ["time (1 s)", (h) => (h.time = "2024-05-01T12:00:01.123456789Z")],
      ["last_block_id.hash", (h) => (h.last_block_id.hash = hashOf("prev"))],
      ["last_block_id.parts.total", (h) => (h.last_block_id.parts.total = 1)],
      ["last_block_id.parts.hash", (h) => (h.last_block_id.parts.hash = hashOf("parts"))],
      ["last_commit_hash", (h) => (h.last_commit_hash = hashOf("commit"))],
      ["data_hash", (h) => (h.data_hash = dataHash(txs(4)))],
      ["validators_hash", (h) => (h.validators_hash = hashOf("other validators"))],
      ["next_validators_hash", (h) => (h.next_validators_hash = hashOf("other validators"))],
      ["consensus_hash", (h) => (h.consensus_hash = hashOf("other params"))],
      ["app_hash", (h) => (h.app_hash = hashOf("app"))],
      ["last_results_hash", (h) => (h.last_results_hash = hashOf("results"))],
      ["evidence_hash", (h) => (h.evidence_hash = hashOf("evidence"))],
      ["proposer_address", (h) => (h.proposer_address = keyPairFromSeed(seedFromLabel("validator-1")).address)],
    ];
    const seen = new Set([hash]);
    for (const [name, mutate] of variants) {
      const changed = clone(base);
      mutate(changed);
      const changedHash = headerHash(changed);
      expect(changedHash, name).toMatch(/^[0-9A-F]{64}$/);
      expect(seen.has(changedHash), name).toBe(false);
      seen.add(changedHash);
    }
  });

  it("has no hash without validators_hash, like CometBFT", () => {
    expect(headerHash({ ...cometHeader(), validators_hash: "" })).toBe("");
  });

  it("throws on malformed fields", () => {
    const base = genesisHeader();
    expect(() => headerHash({ ...base, data_hash: "XYZ" })).toThrow(TypeError);
    expect(() => headerHash({ ...base, proposer_address: "ABC" })).toThrow(TypeError);
    expect(() => headerHash({ ...base, height: "1.5" })).toThrow(TypeError);
    expect(() => headerHash({ ...base, height: "9223372036854775808" })).toThrow(RangeError);
    expect(() => headerHash({ ...base, version: { block: "-1", app: "0" } })).toThrow(TypeError);
    expect(() => headerHash({ ...base, version: { block: "18446744073709551616", app: "0" } })).toThrow(RangeError);
    expect(() => headerHash({ ...base, time: "2024-05-01 12:00:00Z" })).toThrow(TypeError);
    expect(() => headerHash({ ...base, time: "2023-02-29T00:00:00Z" })).toThrow(TypeError);
    expect(() => headerHash({ ...base, last_block_id: { hash: "", parts: { total: -1, hash: "" } } })).toThrow(RangeError);
  });
});

describe("last_commit_hash, last_results_hash, consensus_hash", () => {
  // A real block's last_commit (one validator) and the last_commit_hash its header carries.
  const realSig = {
    block_id_flag: 2,
    validator_address: "FDB7CAC90633FDEC2964A941CC815B5A3B84F0F5",
    timestamp: "2021-07-04T09:35:10.510195Z",
    signature: "2fsZovkCWovi7jorK5LlMr4xoh/etxpayuiboqAlLWe7aQ5ruELn3SEhrUIE9z+Kmp9aw6i+2TPmLi58Uk1bAw==",
  };

  it("hashes a commit as the merkle root of its protobuf CommitSigs (a real block's value)", () => {
    expect(commitHash([realSig])).toBe("5B8F17E19F62E4ED884EF6CA99D0E9F42F6015A2CB9184A90719EECED2149AC2");
    expect(commitHash([])).toBe(EMPTY_SHA256);
    expect(commitHash([{ ...realSig, signature: flipBase64(realSig.signature) }])).not.toBe(commitHash([realSig]));
    expect(commitHash([{ ...realSig, timestamp: "2021-07-04T09:35:10.510196Z" }])).not.toBe(commitHash([realSig]));
    expect(commitHash([realSig, realSig])).toBe(toHex(merkleRoot([encodeCommitSig(realSig), encodeCommitSig(realSig)])));
  });

  it("encodes an absent signature with its zero time written (non-nullable timestamp)", () => {
    const absent = { block_id_flag: 1, validator_address: "", timestamp: "0001-01-01T00:00:00Z", signature: null };
    // field 1 varint 1; field 3: Timestamp { seconds = -62135596800 } (10-byte two's complement varint)
    expect(toHex(encodeCommitSig(absent))).toBe("08011A0B088092B8C398FEFFFFFF01");
  });

  it("hashes tx results by their deterministic fields only (code, data, gas_wanted, gas_used)", () => {
    // ExecTxResult field 5 (gas_wanted) = 200000, field 6 (gas_used) = 51234; zero code and no data left out.
    expect(toHex(encodeDeterministicExecTxResult({ gas_wanted: "200000", gas_used: "51234" }))).toBe("28C09A0C30A29003");
    // code = 5 (field 1), data = 0x0102 (field 2)
    expect(toHex(encodeDeterministicExecTxResult({ code: 5, data: "AQI=", gas_wanted: "1", gas_used: "2" }))).toBe("080512020102280130" + "02");
    const r = { gas_wanted: "200000", gas_used: "51234" };
    const withLog = { ...r, log: "ignored", info: "ignored", events: [{ type: "a", attributes: [] }], codespace: "sdk" };
    expect(resultsHash([r, r])).toBe(resultsHash([withLog, withLog]));
    expect(resultsHash([r])).toBe(toHex(merkleRoot([encodeDeterministicExecTxResult(r)])));
    expect(resultsHash([])).toBe(EMPTY_SHA256);
    expect(resultsHash([{ ...r, gas_used: "51235" }])).not.toBe(resultsHash([r]));
    expect(resultsHash([{ ...r, code: 1 }])).not.toBe(resultsHash([r]));
  });

  it("hashes consensus params as SHA-256 of HashedParams (CometBFT's defaults give the well-known 048091BC…)", () => {
    expect(consensusParamsHash({ max_bytes: "22020096", max_gas: "-1" })).toBe("048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F");
    expect(consensusParamsHash({ max_bytes: 22020096, max_gas: -1 })).toBe("048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F");
    expect(consensusParamsHash({ max_bytes: "22020096", max_gas: "100000000" })).not.toBe("048091BC7DDC283F77BFBF91D73C44DA58C3DF8A9CBC867405D8B7F3DAADA22F");
  });
});

describe("timestamps", () => {
  it("parses RFC 3339 with nanoseconds and offsets", () => {
    expect(parseTimestamp("1970-01-01T00:00:00Z")).toEqual({ seconds: 0n, nanos: 0 });
    expect(parseTimestamp("2019-10-13T16:14:44Z")).toEqual({ seconds: 1570983284n, nanos: 0 });
    expect(parseTimestamp("2023-06-14T10:17:42.164478437Z")).toEqual({ seconds: 1686737862n, nanos: 164478437 });
    expect(parseTimestamp("2023-06-14T12:17:42.5+02:00")).toEqual({ seconds: 1686737862n, nanos: 500000000 });
    expect(parseTimestamp("1969-12-31T23:59:59.999Z")).toEqual({ seconds: -1n, nanos: 999000000 });
    expect(parseTimestamp("0001-01-01T00:00:00Z")).toEqual({ seconds: -62135596800n, nanos: 0 }); // Go's zero time
    expect(parseTimestamp("2024-02-29T00:00:00Z").seconds).toBe(BigInt(Date.UTC(2024, 1, 29) / 1000));
    for (const bad of ["0000-01-01T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T00:00:00", "2024-01-01T00:00:00.Z", "2024-01-01T00:00:00.1234567891Z"]) {
      expect(() => parseTimestamp(bad), bad).toThrow(TypeError);
    }
  });

  it("formats like Go's RFC3339Nano", () => {
    for (const text of ["2023-06-14T10:17:42.164478437Z", "2019-10-13T16:14:44Z", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999999999Z"]) {
      expect(formatTimestamp(parseTimestamp(text))).toBe(text);
    }
    expect(formatTimestamp({ seconds: 1686737862n, nanos: 500000000 })).toBe("2023-06-14T10:17:42.5Z");
    expect(timestampFromDate(new Date("2024-05-01T12:00:00.120Z"))).toBe("2024-05-01T12:00:00.12Z");
  });
});

describe("part set header", () => {
  it("splits block bytes into 64 KiB parts", () => {
    expect(BLOCK_PART_SIZE_BYTES).toBe(65536);
    expect(partSetHeader(new Uint8Array(0))).toEqual({ total: 1, hash: toHex(leafHash(new Uint8Array(0))) });
    const small = utf8("a small block");
    expect(partSetHeader(small)).toEqual({ total: 1, hash: toHex(sha256(bytes(0), small)) });

    const block = Uint8Array.from({ length: 3 * 65536 + 5 }, (_, i) => (i * 31) & 0xff);
    expect(partSetHeader(block.subarray(0, 65536))).toEqual({ total: 1, hash: toHex(leafHash(block.subarray(0, 65536))) });
    const two = block.subarray(0, 65537);
    expect(partSetHeader(two)).toEqual({ total: 2, hash: toHex(innerHash(leafHash(block.subarray(0, 65536)), leafHash(block.subarray(65536, 65537)))) });
    const parts = [0, 1, 2, 3].map((i) => block.subarray(i * 65536, (i + 1) * 65536));
    expect(parts[3]).toHaveLength(5);
    expect(partSetHeader(block)).toEqual({ total: 4, hash: toHex(merkleRoot(parts)) });
    expect(partSetHeader(block)).toEqual(partSetHeader(Uint8Array.from(block)));
  });
});

describe("ed25519 keys", () => {
  it("derives RFC 8032 keys and signatures from a seed", () => {
    // RFC 8032 section 7.1, tests 1 and 2
    const k1 = keyPairFromSeed(fromHex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"));
    expect(toHex(k1.publicKey)).toBe("D75A980182B10AB7D54BFED3C964073A0EE172F3DAA62325AF021A68F707511A");
    expect(toHex(fromBase64(signBytes(k1, new Uint8Array(0))))).toBe(
      "E5564300C360AC729086E2CC806E828A84877F1EB8E5D974D873E065224901555FB8821590A33BACC61E39701CF9B46BD25BF5F0595BBE24655141438E7A100B",
    );
    const k2 = keyPairFromSeed(fromHex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"));
    expect(toHex(k2.publicKey)).toBe("3D4017C3E843895A92B70AA74D1B7EBC9C982CCF2EC4968CC0CD55F12AF4660C");
    expect(toHex(fromBase64(signBytes(k2.privateKey, bytes(0x72))))).toBe(
      "92A009A9F0D4CAB8720E820B5F642540A2B27B5416503F8FB3762223EBDB69DA085AC1E43E15996E458F3613D0F11D8C387B2EAEB4302AEEB00D291612BB0C00",
    );
  });

  it("derives the address as SHA-256(pubkey)[:20]", () => {
    const key = keyPairFromSeed(seedFromLabel("validator-0"));
    expect(key.address).toBe(toHex(sha256(key.publicKey).subarray(0, 20)));
    expect(key.address).toMatch(/^[0-9A-F]{40}$/);
    expect(addressFromPublicKey(key.publicKey)).toBe(key.address);
    expect(publicKeyBytes(key.privateKey)).toEqual(key.publicKey);
    expect(publicKeyBytes(publicKeyFromBytes(key.publicKey))).toEqual(key.publicKey);
    expect(publicKeyJson(key.publicKey)).toEqual({ type: "tendermint/PubKeyEd25519", value: toBase64(key.publicKey) });
  });

  it("is deterministic per seed", () => {
    const a = keyPairFromSeed(seedFromLabel("validator-0"));
    const b = keyPairFromSeed(seedFromLabel("validator-0"));
    const c = keyPairFromSeed(seedFromLabel("validator-1"));
    expect(b.publicKey).toEqual(a.publicKey);
    expect(b.address).toBe(a.address);
    expect(c.publicKey).not.toEqual(a.publicKey);
    expect(signBytes(a, utf8("m"))).toBe(signBytes(b, utf8("m")));
    expect(() => keyPairFromSeed(new Uint8Array(31))).toThrow(RangeError);
    expect(() => publicKeyFromBytes(new Uint8Array(33))).toThrow(RangeError);
  });

  it("signs and verifies, and detects tampering", () => {
    const key = keyPairFromSeed(seedFromLabel("validator-0"));
    const other = keyPairFromSeed(seedFromLabel("validator-1"));
    const message = utf8("commit me");
    const signature = signBytes(key, message);
    expect(fromBase64(signature)).toHaveLength(64);
    expect(verifySignature(key.publicKey, message, signature)).toBe(true);
    expect(verifySignature(key, message, signature)).toBe(true);
    expect(verifySignature(key.publicKeyObject, message, signature)).toBe(true);
    expect(verifySignature(key.publicKey, flipByte(message), signature)).toBe(false);
    expect(verifySignature(key.publicKey, message, flipBase64(signature, 10))).toBe(false);
    expect(verifySignature(key.publicKey, message, flipBase64(signature, 63))).toBe(false);
    expect(verifySignature(other.publicKey, message, signature)).toBe(false);
    expect(verifySignature(key.publicKey, message, "not base64")).toBe(false);
    expect(verifySignature(key.publicKey, message, toBase64(new Uint8Array(63)))).toBe(false);
    expect(verifySignature(new Uint8Array(5), message, signature)).toBe(false);
  });
});

describe("votes", () => {
  const GO_ZERO_TIME = "0001-01-01T00:00:00Z";
  const vote = (patch: Partial<VoteToSign> = {}): VoteToSign => ({
    type: SignedMsgType.Unknown,
    height: "0",
    round: 0,
    block_id: null,
    timestamp: GO_ZERO_TIME,
    chain_id: "",
    ...patch,
  });

  it("matches CometBFT's VoteSignBytes test vectors", () => {
    // types/vote_test.go, TestVoteSignBytesTestVectors
    const zeroTime = "2A0B088092B8C398FEFFFFFF01";
    const heightAndRound = "11010000000000000019" + "0100000000000000";
    expect(toHex(voteSignBytes(vote()))).toBe("0D" + zeroTime);
    expect(toHex(voteSignBytes(vote({ height: "1", round: 1, type: SignedMsgType.Precommit })))).toBe("21" + "0802" + heightAndRound + zeroTime);
    expect(toHex(voteSignBytes(vote({ height: 1, round: 1, type: SignedMsgType.Prevote })))).toBe("21" + "0801" + heightAndRound + zeroTime);
    expect(toHex(voteSignBytes(vote({ height: 1n, round: 1 })))).toBe("1F" + heightAndRound + zeroTime);
    expect(toHex(voteSignBytes(vote({ height: "1", round: 1, chain_id: "test_chain_id" })))).toBe(
      "2E" + heightAndRound + zeroTime + "320D" + toHex(utf8("test_chain_id")),
    );
  });

  it("lays out a vote for a block as documented", () => {
    // CometBFT's exampleVote (types/vote_test.go), precommit.
    const blockHash = hashOf("blockID_hash");
    const partsHash = hashOf("blockID_part_set_header_hash");
    const example = vote({
      type: SignedMsgType.Precommit,
      height: "12345",
      round: 2,
      timestamp: "2017-12-25T03:00:01.234Z",
      block_id: { hash: blockHash, parts: { total: 1000000, hash: partsHash } },
      chain_id: "test_chain_id",
    });
    const body =
      "0802" + // type = 2
      "11" + "3930000000000000" + // height 12345, sfixed64 LE
      "19" + "0200000000000000" + // round 2
      "224A" + "0A20" + blockHash + "1226" + "08C0843D" + "1220" + partsHash + // block_id {hash, parts {total 1000000, hash}}
      "2A0B" + "08B1D381D205" + "10809DCA6F" + // timestamp {seconds 1514170801, nanos 234000000}
      "320D" + toHex(utf8("test_chain_id"));
    expect(toHex(voteSignBytes(example))).toBe((body.length / 2).toString(16).toUpperCase().padStart(2, "0") + body);
    // a vote for nil: null and the zero block id are the same
    expect(voteSignBytes({ ...example, block_id: null })).toEqual(voteSignBytes({ ...example, block_id: zeroBlockId() }));
    expect(voteSignBytes({ ...example, block_id: null })).not.toEqual(voteSignBytes(example));
  });

  it("signs and verifies votes, and detects any change", () => {
    const key = keyPairFromSeed(seedFromLabel("validator-0"));
    const other = keyPairFromSeed(seedFromLabel("validator-1"));
    const base = vote({
      type: SignedMsgType.Precommit,
      height: "42",
      round: 0,
      timestamp: "2024-05-01T12:00:01.5Z",
      block_id: { hash: hashOf("block 42"), parts: { total: 1, hash: hashOf("parts 42") } },
      chain_id: "blockgate-devnet-1",
    });
    const signature = signVote(key, base);
    expect(signature).toBe(signVote(key.privateKey, clone(base)));
    expect(verifyVote(key.publicKey, base, signature)).toBe(true);
    expect(verifyVote(key.publicKey, clone(base), signature)).toBe(true);
    expect(verifyVote(other.publicKey, base, signature)).toBe(false);
    expect(verifyVote(key.publicKey, base, flipBase64(signature, 1))).toBe(false);

    const changes: Partial<VoteToSign>[] = [
      { type: SignedMsgType.Prevote },
      { height: "43" },
      { round: 1 },
      { timestamp: "2024-05-01T12:00:01.500000001Z" },
      { block_id: null },
      { block_id: { hash: hashOf("block 43"), parts: { total: 1, hash: hashOf("parts 42") } } },
      { block_id: { hash: hashOf("block 42"), parts: { total: 2, hash: hashOf("parts 42") } } },
      { block_id: { hash: hashOf("block 42"), parts: { total: 1, hash: hashOf("parts 43") } } },
      { chain_id: "blockgate-devnet-2" },
    ];
    for (const change of changes) expect(verifyVote(key.publicKey, { ...base, ...change }, signature), JSON.stringify(change)).toBe(false);
    // malformed votes are rejected, not thrown
    expect(verifyVote(key.publicKey, { ...base, timestamp: "yesterday" }, signature)).toBe(false);
    expect(verifyVote(key.publicKey, { ...base, height: "x" }, signature)).toBe(false);
    expect(() => voteSignBytes({ ...base, round: 2 ** 31 })).toThrow(RangeError);
  });
});
