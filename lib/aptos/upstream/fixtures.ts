/**
 * For tests only: two blocks written by hand in the shapes a current mainnet fullnode answers
 * (https://aptos.dev/build/apis/fullnode-rest-api), with what the built-in devnet does not make:
 * a validator transaction, block epilogue transactions closing the blocks (instead of state
 * checkpoints), a multi-level event of a third-party module, an aborted transfer. Versions,
 * heights and times are set where the stand-in places the blocks; everything else is as written.
 */
import type { TransactionJson } from "../types";

const PLACEHOLDER = "0x414343554d554c41544f525f504c414345484f4c4445525f4841534800000000";
const EXECUTED = "Executed successfully";
const SENDER = "0x9bfd1ed8b1d1ec1fd9e7b1d4b5a5c1a6b11a2d6e0f1f0ad9e4bd9c5bfe08a7d1";
const RECIPIENT = "0x27c7cc3b6b39e0f0e5b1fb3d1d1bd86cd6a1f3aef11ac6d5e1e0e5d6c3f8b2a4";
const SENDER_STORE = "0x5a3b0a0e8d0e3b6cbbd7dd69c9bd1e45e6d2a0b4a36fd1b0cf02c5d6d2a9d9e7";
const RECIPIENT_STORE = "0xe0f0c8d3a1b7a9c3e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a2b4c6d8";
const PROPOSER = "0x6e7c0dd2d8c4b0f1f5f8a3c4e6e8bca7c9e3d5f1a2b4c6d8e0f2a4b6c8d0e2f4";
const DEX = "0x48271d39d0b05bd6efca2278f22277d6fcc375504f9839fd73f74ace240861af";
const POOL = "0x82e0b52f95ae57b35220726a32c3415919389aa5b8baa33a058d7125797535cc";
const USDT = "0x357b0b74bc833e95a115ad22604854d6b0fca151cecd94111770e5d6ffc9dc2b";

const fee = (gas: string, io: string) => ({
  guid: { creation_number: "0", account_address: "0x0" },
  sequence_number: "0",
  type: "0x1::transaction_fee::FeeStatement",
  data: { execution_gas_units: String(Number(gas) - Number(io)), io_gas_units: io, storage_fee_octas: "0", storage_fee_refund_octas: "0", total_charge_gas_units: gas },
});

function metadata(height: bigint, version: bigint, timestampUs: bigint, hash: string, id: string, round: string): TransactionJson {
  return {
    version: version.toString(),
    hash,
    state_change_hash: "0x618ad7b75ae5392193fb6614105ffd888c73b288ea807c8f2ba9388bfaf0ec8d",
    event_root_hash: "0xe26d5c36fd46b8f23d2f467e5890378e32eccdb00c46e8908ccf73bca6e50211",
    state_checkpoint_hash: null,
    gas_used: "0",
    success: true,
    vm_status: EXECUTED,
    accumulator_root_hash: "0xcf20b1c2d81bbf9a92f5bde4c06f58120f14f4fa1de35a9edb01a469cd6cb5be",
    changes: [
      {
        address: "0x1",
        state_key_hash: "0x5ddf404c60e96e9485beafcabb95609fed8e38e941a725cae4dcec8296fb32d7",
        data: {
          type: "0x1::block::BlockResource",
          data: {
            epoch_interval: "7200000000",
            height: height.toString(),
            new_block_events: { counter: (height + 1n).toString(), guid: { id: { addr: "0x1", creation_num: "3" } } },
            update_epoch_interval_events: { counter: "0", guid: { id: { addr: "0x1", creation_num: "4" } } },
          },
        },
        type: "write_resource",
      },
    ],
    id,
    epoch: "9876",
    round,
    events: [
      {
        guid: { creation_number: "3", account_address: "0x1" },
        sequence_number: height.toString(),
        type: "0x1::block::NewBlockEvent",
        data: {
          epoch: "9876",
          failed_proposer_indices: [],
          hash: id,
          height: height.toString(),
          previous_block_votes_bitvec: "0xffffbf7ffff7fffe7fffdf80",
          proposer: PROPOSER,
          round,
          time_microseconds: timestampUs.toString(),
        },
      },
    ],
    previous_block_votes_bitvec: [255, 255, 191, 127, 255, 247, 255, 254, 127, 255, 223, 128],
    proposer: PROPOSER,
    failed_proposer_indices: [],
    timestamp: timestampUs.toString(),
    type: "block_metadata_transaction",
  };
}

function epilogue(version: bigint, timestampUs: bigint, hash: string, gasUnits: number): TransactionJson {
  return {
    version: version.toString(),
    hash,
    state_change_hash: "0xafb6e14fe47d850fd0a7395bcfb997ffacf4715e0f895cc162c218e4a7564bc6",
    event_root_hash: PLACEHOLDER,
    state_checkpoint_hash: "0xbf257d934f991d1e7d74079cc9060d3ac005aaa208d93a1fd4928dfc224bba53",
    gas_used: "0",
    success: true,
    vm_status: EXECUTED,
    accumulator_root_hash: "0xc985314d5c118899c649b772c237178c63f328e7d286aceea01a30373d491d95",
    changes: [],
    timestamp: timestampUs.toString(),
    block_end_info: { block_gas_limit_reached: false, block_output_limit_reached: false, block_effective_block_gas_units: gasUnits, block_approx_output_size: 21541 },
    type: "block_epilogue_transaction",
  } as TransactionJson;
}

/** The first fixture block: metadata, a JWK update, a transfer, an aborted coin transfer, the epilogue. */
export function fixtureBlockA(height: bigint, firstVersion: bigint, timestampUs: bigint): TransactionJson[] {
  const v = (i: number) => (firstVersion + BigInt(i)).toString();
  return [
    metadata(height, firstVersion, timestampUs, "0x6ab97792188e2423f1f0cd7359858e9c33c6080f4345867c1345335ac92a9904", "0xfcc53f67f4e8d63c032d321aefdf5480d0301d65f69c0ea3ac5ca36e62ce6d50", "3"),
    {
      version: v(1),
      hash: "0x228fedb67028a7c75d15060607e20bd796982b59bd55db95cd9fc655e7cf9e5b",
      state_change_hash: "0xbf0d580cd494c80da4b7a000c6d6ac8180436ba83e92b318b35992c9ddc391d6",
      event_root_hash: "0x777e6af03fdc95f157bdd64bb414cadaa6a8a772b591ec75814def816080f354",
      state_checkpoint_hash: null,
      gas_used: "0",
      success: true,
      vm_status: EXECUTED,
      accumulator_root_hash: "0x017398e095027ac8128462603c5a566f5fa4da47c574aca59e11dbe4ec96c076",
      changes: [],
      events: [
        {
          guid: { creation_number: "0", account_address: "0x0" },
          sequence_number: "0",
          type: "0x1::jwks::ObservedJWKsUpdated",
          data: { epoch: "9876", jwks: { entries: [{ issuer: "0x68747470733a2f2f6163636f756e74732e676f6f676c652e636f6d", jwks: [], version: "41" }] } },
        },
      ],
      timestamp: timestampUs.toString(),
      validator_transaction_type: "observed_jwk_update",
      quorum_certified_update: {
        update: { issuer: "0x68747470733a2f2f6163636f756e74732e676f6f676c652e636f6d", version: "41", jwks: [] },
        multi_sig: { signer_indices: [0, 1, 2, 3], sig: "0xa1b01b0b09f5633e5009cb98dd13eef280a0841ce40b404a2441cb39cc908b3d" },
      },
      type: "validator_transaction",
    } as TransactionJson,
    {
      version: v(2),
      hash: "0x0ac3d9445757937dcfadd802fe2c338075180bb1c9962bc9ade7551c7db8772a",
      state_change_hash: "0xdafc1facfe68ade6199b16f385b4dbb7a728c70ef5adc8da91a987afd0347126",
      event_root_hash: "0x4ff6787d6d4d035ae938b6085057d5fb921d96ea2e8964de9f50ae7edd3497f8",
      state_checkpoint_hash: null,
      gas_used: "11",
      success: true,
      vm_status: EXECUTED,
      accumulator_root_hash: "0x54b745b52b1cd50641c388572eece9f828fa10cf6309b1cffcc7c13c363e8641",
      changes: [
        {
          address: SENDER_STORE,
          state_key_hash: "0x05fd577e62846a03b4673b83efec885b5e12c7c749f81d5311410d6b3491a84f",
          data: { type: "0x1::fungible_asset::FungibleStore", data: { balance: "481236900", frozen: false, metadata: { inner: "0xa" } } },
          type: "write_resource",
        },
      ],
      sender: SENDER,
      sequence_number: "1187",
      max_gas_amount: "1100",
      gas_unit_price: "100",
      expiration_timestamp_secs: (timestampUs / 1_000_000n + 60n).toString(),
      payload: { function: "0x1::aptos_account::transfer", type_arguments: [], arguments: [RECIPIENT, "2500000"], type: "entry_function_payload" },
      signature: {
        public_key: "0x3160d4596c1fb87bad52c0a0311657d164af75fc9dd59878ab8941e6f45c2a7d",
        signature: "0x254d0e529f38e43d6c0c9b2e238466be8d690a437fb4dc319bdc442161026a2e7e5f7c175d73768e0dceba971709e56a54e66fb634904da41ae27942ee09d994",
        type: "ed25519_signature",
      },
      events: [
        { guid: { creation_number: "0", account_address: "0x0" }, sequence_number: "0", type: "0x1::fungible_asset::Withdraw", data: { amount: "2500000", store: SENDER_STORE } },
        { guid: { creation_number: "0", account_address: "0x0" }, sequence_number: "0", type: "0x1::fungible_asset::Deposit", data: { amount: "2500000", store: RECIPIENT_STORE } },
        fee("11", "5"),
      ],
      timestamp: timestampUs.toString(),
      type: "user_transaction",
    },
    {
      version: v(3),
      hash: "0x1d00451b4c771b8eccf04b20732b1e1a42e1491d3bed4a4035024c0c400878df",
      state_change_hash: "0x8fbe9ae203f8984a1f05729bb46fbcbc42954f272659077336c2ad5553705d79",
      event_root_hash: "0x87433f2915a579db00b5c314bcb35cece00f078e7fd88292f37f8566c43d2afa",
      state_checkpoint_hash: null,
      gas_used: "6",
      success: false,
      vm_status: "Move abort in 0x1::coin: EINSUFFICIENT_BALANCE(0x10006): Not enough coins to complete transaction",
      accumulator_root_hash: "0x94e3a6205938be960fab8c0e8a6ed2c480f3ad62c30d93c69fee0d48a9d7c5e8",
      changes: [],
      sender: RECIPIENT,
      sequence_number: "42",
      max_gas_amount: "2000",
      gas_unit_price: "100",
      expiration_timestamp_secs: (timestampUs / 1_000_000n + 600n).toString(),
      payload: { function: "0x1::coin::transfer", type_arguments: [`${USDT}::asset::USDT`], arguments: [SENDER, "1000000000"], type: "entry_function_payload" },
      signature: {
        public_key: "0x058067ddfe1e671b254e3ec831f56012291d2cc362630d51b82d6b4a9b64051b",
        signature: "0x7592da4f08706b4a433980a63f63e78341fe19cafb7de1c8986e4de5349490b37f5fbf79597ed27977c11eb563db08e65479366a509777ec4f39a9117258c51e",
        type: "ed25519_signature",
      },
      events: [fee("6", "2")],
      timestamp: timestampUs.toString(),
      type: "user_transaction",
    },
    epilogue(firstVersion + 4n, timestampUs, "0x3803bc5981fa3dda1ed46e106f97a851c96f256b668c390157f41ef1c95e7268", 500),
  ];
}

/** The second fixture block: metadata, a DEX swap whose event nests three levels, the epilogue. */
export function fixtureBlockB(height: bigint, firstVersion: bigint, timestampUs: bigint): TransactionJson[] {
  return [
    metadata(height, firstVersion, timestampUs, "0x4272d582cb7b1ca7314afc1172c4bfdf1cc766c6f088b30214f55fe93a058f5d", "0xc2f41aac54c2c824991b1641aa78693cd72083cc2a5706c60153e72396f0f19a", "4"),
    {
      version: (firstVersion + 1n).toString(),
      hash: "0xeae4ee37c928e4976ba07dc0b5ebe53f8b337642e919faea10d96537e133303a",
      state_change_hash: "0xb402a2a086a81b9d99a9c41b6d02945dac344c5ebece0d8beede396321f3970a",
      event_root_hash: "0x0c0c52a51e4a3441d08a1b2641c24c06e0072ce91164326c56f53b3b9d7e86a1",
      state_checkpoint_hash: null,
      gas_used: "58",
      success: true,
      vm_status: EXECUTED,
      accumulator_root_hash: "0x7ea965164fced08f5dbc52aecb6c1a2d3cdb73eefef3ae54bef572f5791040a4",
      changes: [],
      sender: SENDER,
      sequence_number: "1188",
      max_gas_amount: "5800",
      gas_unit_price: "100",
      expiration_timestamp_secs: (timestampUs / 1_000_000n + 60n).toString(),
      payload: {
        function: `${DEX}::router::swap_exact_input`,
        type_arguments: ["0x1::aptos_coin::AptosCoin", `${USDT}::asset::USDT`],
        arguments: ["100000000", "452000"],
        type: "entry_function_payload",
      },
      signature: {
        public_key: "0x3160d4596c1fb87bad52c0a0311657d164af75fc9dd59878ab8941e6f45c2a7d",
        signature: "0x254d0e529f38e43d6c0c9b2e238466be8d690a437fb4dc319bdc442161026a2e7e5f7c175d73768e0dceba971709e56a54e66fb634904da41ae27942ee09d994",
        type: "ed25519_signature",
      },
      events: [
        { guid: { creation_number: "0", account_address: "0x0" }, sequence_number: "0", type: "0x1::fungible_asset::Withdraw", data: { amount: "100000000", store: SENDER_STORE } },
        {
          guid: { creation_number: "0", account_address: "0x0" },
          sequence_number: "0",
          type: `${DEX}::pool::SwapEvent`,
          data: { amount_in: "100000000", amount_out: "452371", from_token: "0xa", pool: POOL, reserves: { after: { x: "9100000000", y: "41160000" }, before: { x: "9000000000", y: "41612371" } }, to_token: USDT },
        },
        fee("58", "31"),
      ],
      timestamp: timestampUs.toString(),
      type: "user_transaction",
    },
    epilogue(firstVersion + 2n, timestampUs, "0x729193d19f66ef0ecf10c32202cd00d29851c3a2c922b5a718bef5d65420d9bd", 58),
  ];
}

/** The module of fixtureBlockText's transactions (a third party's: any text may go through it). */
export const MEMO_MODULE = "0x7e3a5f0c1b9d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5b7d9f1a3c5e7b9d0f";

/**
 * A block whose transactions carry text PostgreSQL's text and jsonb cannot hold as it is: an
 * event whose data has NUL in a value and a key and an unpaired surrogate, a string argument with
 * NUL, and an aborted call whose vm_status holds NUL. Move strings may hold NUL; no Rust encoder
 * writes a lone \ud800, but it is valid JSON and a node's proxy could.
 */
export function fixtureBlockText(height: bigint, firstVersion: bigint, timestampUs: bigint): TransactionJson[] {
  const v = (i: number) => (firstVersion + BigInt(i)).toString();
  const user = (i: number, hash: string, success: boolean, vmStatus: string, args: unknown[], events: unknown[]) => ({
    version: v(i),
    hash,
    state_change_hash: "0x3c6d0b6bb0b2b62e8cbb1f1d0a8b4c0d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1a3b",
    event_root_hash: "0x9a7c5e3b1d0f2e4c6a8b0d2f4e6c8a0b1d3f5e7c9a1b3d5f7e9c0a2b4d6f8e0a",
    state_checkpoint_hash: null,
    gas_used: "9",
    success,
    vm_status: vmStatus,
    accumulator_root_hash: "0x5b7d9f1a3c5e7b9d0f2a4c6e8b0d1f3a5c7e9b1d3f5a7c9e0b2d4f6a8c0e1b3d",
    changes: [],
    sender: SENDER,
    sequence_number: String(1189 + i),
    max_gas_amount: "900",
    gas_unit_price: "100",
    expiration_timestamp_secs: (timestampUs / 1_000_000n + 60n).toString(),
    payload: { function: `${MEMO_MODULE}::memo::post`, type_arguments: [], arguments: args, type: "entry_function_payload" },
    signature: {
      public_key: "0x3160d4596c1fb87bad52c0a0311657d164af75fc9dd59878ab8941e6f45c2a7d",
      signature: "0x254d0e529f38e43d6c0c9b2e238466be8d690a437fb4dc319bdc442161026a2e7e5f7c175d73768e0dceba971709e56a54e66fb634904da41ae27942ee09d994",
      type: "ed25519_signature",
    },
    events,
    timestamp: timestampUs.toString(),
    type: "user_transaction",
  });
  const posted = {
    guid: { creation_number: "0", account_address: "0x0" },
    sequence_number: "0",
    type: `${MEMO_MODULE}::memo::Posted`,
    data: { amount: "5", memo: "a\u0000b", note: "x\ud800y", "k\u0000": "v" },
  };
  return [
    metadata(height, firstVersion, timestampUs, "0x8d1f3b5a7c9e0d2f4a6c8e1b3d5f7a9c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d1f", "0x2e4c6a8d0f1b3d5e7a9c1e3b5d7f9a0c2e4b6d8f1a3c5e7b9d0f2a4c6e8b1d3f", "5"),
    user(1, "0x6c8e0a2c4e6b8d1f3a5c7e9b0d2f4a6c8e1b3d5f7a9c0e2b4d6f8a1c3e5b7d9f", true, EXECUTED, ["a\u0000b", "100"], [posted, fee("9", "4")]),
    user(2, "0x0f2a4c6e8b1d3f5a7c9e0b2d4f6a8c1e3b5d7f9a0c2e4b6d8f1a3c5e7b9d0f2a", false, "Move abort in 0x7e3a…::memo: EBAD_MEMO(0x1): the memo \u0000", ["\u0000", "1"], [fee("6", "2")]),
    epilogue(firstVersion + 3n, timestampUs, "0x4a6c8e1b3d5f7a9c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d1f3a5c7e9b0d2f4a6c", 15),
  ] as TransactionJson[];
}
