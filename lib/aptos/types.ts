/**
 * JSON shapes of the Aptos fullnode REST API (https://aptos.dev/build/apis/fullnode-rest-api),
 * as a fullnode answers them: every u64 a decimal string, hashes and addresses `0x`-prefixed
 * lower-case hex, timestamps in microseconds, and the `type` discriminator written last.
 */

/** `GET /v1`: the ledger information. */
export interface LedgerInfo {
  chain_id: number;
  epoch: string;
  ledger_version: string;
  oldest_ledger_version: string;
  ledger_timestamp: string;
  node_role: "full_node" | "validator";
  oldest_block_height: string;
  block_height: string;
  git_hash?: string;
}

export interface EventGuid {
  creation_number: string;
  account_address: string;
}

export interface AptosEventJson {
  guid: EventGuid;
  sequence_number: string;
  /** The event's Move type, type arguments included. */
  type: string;
  data: unknown;
}

export interface EntryFunctionPayload {
  function: string;
  type_arguments: string[];
  arguments: unknown[];
  type: "entry_function_payload";
}

export interface Ed25519SignatureJson {
  public_key: string;
  signature: string;
  type: "ed25519_signature";
}

export interface WriteSetChange {
  type: string;
  [field: string]: unknown;
}

/** The fields every committed transaction starts with, in the fullnode's order. */
export interface TransactionInfo {
  version: string;
  hash: string;
  state_change_hash: string;
  event_root_hash: string;
  state_checkpoint_hash: string | null;
  gas_used: string;
  success: boolean;
  vm_status: string;
  accumulator_root_hash: string;
  changes: WriteSetChange[];
}

export interface UserTransactionJson extends TransactionInfo {
  sender: string;
  sequence_number: string;
  max_gas_amount: string;
  gas_unit_price: string;
  expiration_timestamp_secs: string;
  payload: EntryFunctionPayload | { type: string; [field: string]: unknown };
  signature: Ed25519SignatureJson | { type: string; [field: string]: unknown };
  events: AptosEventJson[];
  timestamp: string;
  type: "user_transaction";
}

export interface BlockMetadataTransactionJson extends TransactionInfo {
  id: string;
  epoch: string;
  round: string;
  events: AptosEventJson[];
  previous_block_votes_bitvec: number[];
  proposer: string;
  failed_proposer_indices: number[];
  timestamp: string;
  type: "block_metadata_transaction";
}

export interface StateCheckpointTransactionJson extends TransactionInfo {
  timestamp: string;
  type: "state_checkpoint_transaction";
}

export interface GenesisTransactionJson extends TransactionInfo {
  payload: { write_set: { changes: unknown[]; events: unknown[]; type: "direct_write_set" }; type: "write_set_payload" };
  events: AptosEventJson[];
  type: "genesis_transaction";
}

/** Any committed transaction; kinds this service does not produce (validator, block epilogue) pass through as they are. */
export type TransactionJson =
  | UserTransactionJson
  | BlockMetadataTransactionJson
  | StateCheckpointTransactionJson
  | GenesisTransactionJson
  | (TransactionInfo & { type: string; events?: AptosEventJson[]; timestamp?: string });

/** `GET /v1/blocks/by_height/<h>`: `transactions` is null unless `with_transactions=true`. */
export interface BlockJson {
  block_height: string;
  block_hash: string;
  block_timestamp: string;
  first_version: string;
  last_version: string;
  transactions: TransactionJson[] | null;
}

/** The error body of every failed call: `{ message, error_code, vm_error_code }`. */
export interface AptosErrorJson {
  message: string;
  error_code: string;
  vm_error_code: number | null;
}

/** A block ready to be stored: its header, and its transactions with the columns matching reads. */
export interface IngestBlock {
  height: bigint;
  hash: string;
  firstVersion: bigint;
  lastVersion: bigint;
  timestamp: bigint;
  epoch: bigint;
  txs: IngestTx[];
}

export interface IngestTx {
  version: bigint;
  hash: string;
  type: string;
  sender: string | null;
  sequenceNumber: bigint | null;
  payloadFunction: string | null;
  success: boolean;
  body: TransactionJson;
  events: AptosEventJson[];
}
