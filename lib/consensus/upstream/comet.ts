/**
 * The JSON a real CometBFT node (v0.38; v0.34 where it differs) answers on its RPC, as zod schemas
 * of the fields we read. int64s arrive as decimal strings; ABCI results omit zero values
 * (`code`, `log`, `gas_wanted`, an attribute's `index: false`...), so those default here.
 */
import { z } from "zod";

const int64 = z.union([z.string().regex(/^-?\d{1,19}$/), z.number().int()]).transform(String);
const text = z.string().nullish().transform((v) => v ?? "");

export const blockIdSchema = z.object({
  hash: z.string(),
  parts: z.object({ total: z.number().int(), hash: z.string() }),
});

export const headerSchema = z.object({
  version: z.object({ block: int64, app: int64.optional().transform((v) => v ?? "0") }),
  chain_id: z.string(),
  height: int64,
  time: z.string(),
  last_block_id: blockIdSchema,
  last_commit_hash: z.string(),
  data_hash: z.string(),
  validators_hash: z.string(),
  next_validators_hash: z.string(),
  consensus_hash: z.string(),
  app_hash: z.string(),
  last_results_hash: z.string(),
  evidence_hash: z.string(),
  proposer_address: z.string(),
});

export const commitSigSchema = z.object({
  /** 1 absent, 2 commit, 3 nil. */
  block_id_flag: z.number().int(),
  validator_address: text,
  timestamp: z.string(),
  signature: z.string().nullable(),
});

export const cometBlockSchema = z.object({
  block_id: blockIdSchema,
  block: z.object({
    header: headerSchema,
    data: z.object({ txs: z.array(z.string()).nullish() }),
    evidence: z.object({ evidence: z.array(z.unknown()).nullish() }).nullish(),
    last_commit: z
      .object({
        height: int64,
        round: z.number().int(),
        block_id: blockIdSchema,
        signatures: z.array(commitSigSchema).nullish(),
      })
      .nullish(),
  }),
});

export const eventSchema = z.object({
  type: z.string(),
  attributes: z
    .array(z.object({ key: text, value: text, index: z.boolean().optional().transform((v) => v === true) }))
    .nullish()
    .transform((v) => v ?? []),
});

export const txExecResultSchema = z.object({
  code: z.number().int().optional(),
  log: text,
  gas_wanted: int64.optional().transform((v) => v ?? "0"),
  gas_used: int64.optional().transform((v) => v ?? "0"),
  events: z
    .array(eventSchema)
    .nullish()
    .transform((v) => v ?? []),
});

const events = z
  .array(eventSchema)
  .nullish()
  .transform((v) => v ?? []);

export const blockResultsSchema = z.object({
  height: int64,
  txs_results: z
    .array(txExecResultSchema)
    .nullish()
    .transform((v) => v ?? []),
  /** v0.38. */
  finalize_block_events: events,
  /** v0.34 and v0.37. */
  begin_block_events: events,
  end_block_events: events,
});

export const statusSchema = z.object({
  node_info: z.object({
    protocol_version: z.object({ p2p: int64, block: int64, app: int64 }),
    id: z.string(),
    listen_addr: z.string(),
    network: z.string(),
    version: z.string(),
    channels: z.string(),
    moniker: z.string(),
    other: z.object({ tx_index: z.string(), rpc_address: z.string() }),
  }),
  sync_info: z.object({
    latest_block_hash: z.string(),
    latest_app_hash: z.string(),
    latest_block_height: int64,
    latest_block_time: z.string(),
    earliest_block_hash: z.string(),
    earliest_app_hash: z.string(),
    earliest_block_height: int64,
    earliest_block_time: z.string(),
    catching_up: z.boolean(),
  }),
  validator_info: z.object({
    address: z.string(),
    pub_key: z.object({ type: z.string(), value: z.string() }),
    voting_power: int64,
  }),
});

/** v0.38 reports a peer's node_info and remote_ip; v0.35-style nodes report node_id and url. */
const peerSchema = z.union([
  z.object({ node_id: z.string(), url: z.string() }),
  z.object({
    node_info: z.object({ id: z.string(), listen_addr: z.string() }),
    remote_ip: z.string(),
  }),
]);

export const netInfoSchema = z.object({
  listening: z.boolean(),
  listeners: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? []),
  n_peers: int64,
  peers: z
    .array(peerSchema)
    .nullish()
    .transform((v) => v ?? []),
});

export const consensusParamsSchema = z.object({
  block_height: int64,
  consensus_params: z.object({
    block: z.object({ max_bytes: int64, max_gas: int64, time_iota_ms: int64.optional() }),
    evidence: z.object({ max_age_num_blocks: int64.optional(), max_age: int64.optional() }),
    validator: z.object({ pub_key_types: z.array(z.string()) }),
  }),
});

export type CometBlock = z.infer<typeof cometBlockSchema>;
export type CometBlockResults = z.infer<typeof blockResultsSchema>;
export type CometEvent = z.infer<typeof eventSchema>;
export type CometStatus = z.infer<typeof statusSchema>;
export type CometNetInfo = z.infer<typeof netInfoSchema>;
export type CometConsensusParams = z.infer<typeof consensusParamsSchema>;
