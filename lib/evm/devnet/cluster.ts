/**
 * One anvil devnet per EVM network in the cluster. A process that needs a network's devnet (a web
 * process's node endpoint, a webhook follower) marks it wanted in devnet_endpoints and reads its URL
 * there (DevnetDirectory). Worker processes look for wanted networks; for each, the one holding the
 * leader lock `evm-devnet:<network>` runs anvil from the state last saved in devnet_states, registers
 * its URL, saves the state every EVM_DEVNET_SAVE_BLOCKS blocks and at a clean stop, and stops it once
 * nobody wanted it for EVM_DEVNET_IDLE_MS. The others wait on the lock to take over.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import type { Stoppable } from "@/lib/chains/family";
import { db } from "@/lib/db/client";
import { listen, type Listening } from "@/lib/db/listen";
import { errorMessage, type Logger } from "@/lib/log";
import type { Network } from "@/lib/networks";
import { UpstreamUnavailable } from "@/lib/upstream/pool";
import type { DevnetLocator } from "../backends";
import { startWorker, WORKER_DONE } from "@/lib/workers/worker";
import { answersRpc, startAnvil, trimState, type Anvil, type DevnetStarted } from "./anvil";

/** Where the holder announces a change of a network's URL (the payload is the network's slug). */
const CHANNEL = "devnet_endpoints";
/** How long a first request waits for a worker to start the devnet it asked for. */
const DEFAULT_WAIT_MS = 20_000;
const LOOKUP_EVERY_MS = 200;
/** A registered URL is asked once (eth_chainId) before it is used: a dead holder's is passed over. */
const PROBE_TIMEOUT_MS = 2000;

/** The host name devnets are registered under: DEVNET_ADVERTISE_HOST, else DEVNET_HOST unless it is a wildcard. */
export function advertisedHost(env: { DEVNET_HOST: string; DEVNET_ADVERTISE_HOST?: string }): string {
  if (env.DEVNET_ADVERTISE_HOST) return env.DEVNET_ADVERTISE_HOST;
  return env.DEVNET_HOST === "0.0.0.0" || env.DEVNET_HOST === "::" ? os.hostname() : env.DEVNET_HOST;
}

/** Marks the network wanted now, for the workers to start (or keep) its devnet. */
async function want(slug: string): Promise<void> {
  await db().$executeRaw`
    INSERT INTO devnet_endpoints (network, wanted_at) VALUES (${slug}, now())
    ON CONFLICT (network) DO UPDATE SET wanted_at = now()`;
}

/**
 * Where each devnet network's anvil listens, as its holder registered it: cached, forgotten when
 * the holder announces a change or the URL stops answering. A network with none registered is
 * marked wanted and waited for (at most `waitMs`), then refused as an unreachable upstream.
 */
export class DevnetDirectory implements DevnetLocator {
  private readonly urls = new Map<string, string>();
  private readonly lookups = new Map<string, Promise<string>>();
  /** When this process last marked each network wanted (performance.now()). */
  private readonly wanted = new Map<string, number>();
  private readonly listening: Listening;
  private readonly wantEveryMs: number;
  private readonly waitMs: number;

  constructor(o: { databaseUrl: string; idleMs: number; waitMs?: number; logger: Logger }) {
    // Often enough that a devnet in use is never taken for idle.
    this.wantEveryMs = Math.min(60_000, o.idleMs / 4);
    this.waitMs = o.waitMs ?? DEFAULT_WAIT_MS;
    this.log = o.logger;
    this.listening = listen({
      connectionString: o.databaseUrl,
      channel: CHANNEL,
      name: "devnet endpoints",
      onNotification: (slug) => this.urls.delete(slug),
      // Announcements may have been missed meanwhile.
      onListening: (afterOutage) => afterOutage && this.urls.clear(),
    });
  }

  private readonly log: Logger;

  url(network: Network): Promise<string> {
    const slug = network.slug;
    const known = this.urls.get(slug);
    if (known !== undefined) {
      if (performance.now() - (this.wanted.get(slug) ?? -Infinity) >= this.wantEveryMs) {
        this.wanted.set(slug, performance.now());
        void want(slug).catch((e: unknown) => this.log.warn({ network: slug }, `could not mark the devnet wanted: ${errorMessage(e)}`));
      }
      return Promise.resolve(known);
    }
    let lookup = this.lookups.get(slug);
    if (!lookup) {
      lookup = this.lookup(slug).finally(() => this.lookups.delete(slug));
      this.lookups.set(slug, lookup);
    }
    return lookup;
  }

  private async lookup(slug: string): Promise<string> {
    const until = performance.now() + this.waitMs;
    this.wanted.set(slug, performance.now());
    await want(slug);
    for (;;) {
      const rows = await db().$queryRaw<{ url: string | null }[]>`SELECT url FROM devnet_endpoints WHERE network = ${slug}`;
      const url = rows[0]?.url;
      // A holder that died leaves its URL until another takes over: waited past, as a devnet starting.
      if (url && (await answersRpc(url, PROBE_TIMEOUT_MS))) {
        this.urls.set(slug, url);
        return url;
      }
      if (performance.now() >= until) {
        throw new UpstreamUnavailable(`no devnet is running for ${slug} (none was started within ${Math.round(this.waitMs / 1000)} s: is a ROLE=worker or all process running with DEVNETS=on?)`, []);
      }
      await delay(LOOKUP_EVERY_MS);
    }
  }

  unreachable(network: Network, url: string): void {
    if (this.urls.get(network.slug) === url) this.urls.delete(network.slug);
  }

  stop(): Promise<void> {
    return this.listening.stop();
  }
}

export interface DevnetHostOptions {
  databaseUrl: string;
  /** This process's cluster_members id, registered as the holder. */
  memberId: string;
  /** Each network's anvil works in `<dataDir>/<slug>`. */
  dataDir: string;
  blockTimeSec: number;
  idleMs: number;
  /** The state is saved every this many blocks. */
  saveBlocks: number;
  /**
   * The newest blocks the devnet keeps (EVM_DEVNET_RETAIN_BLOCKS): anvil keeps the transactions of
   * these only, and once it holds this many blocks more than it started with, it is restarted
   * from its state trimmed to them, so its memory, its state file and the saved state stay
   * bounded. 0 or unset: all.
   */
  retainBlocks?: number;
  /** Where anvil listens, and the host name its URL is registered with. */
  host: string;
  advertiseHost: string;
  logger: Logger;
  /** Called after each start, for example to start the traffic generator; returns how to stop what it started. */
  onStarted?: (started: DevnetStarted) => Promise<(() => Promise<void>) | void>;
  /** How often wanted networks are looked for, and a waiting worker tries the lock (default 1 s). */
  pollMs?: number;
}

/**
 * What a worker process runs for the devnet networks: every `pollMs`, the networks wanted within
 * the idle period get a leader-locked host (hostDevnet) here, unless they have one.
 */
export function startDevnetHosts(networks: readonly Network[], o: DevnetHostOptions): Stoppable {
  const bySlug = new Map(networks.map((n) => [n.slug, n]));
  const hosts = new Map<string, Stoppable>();
  const stopping = new AbortController();
  const pollMs = o.pollMs ?? 1000;
  let failing = false;
  const look = async () => {
    while (!stopping.signal.aborted) {
      try {
        const rows = await db().$queryRaw<{ network: string }[]>`
          SELECT network FROM devnet_endpoints WHERE wanted_at > now() - make_interval(secs => ${o.idleMs / 1000})`;
        for (const { network } of rows) {
          const n = bySlug.get(network);
          if (n && !hosts.has(network) && !stopping.signal.aborted) hosts.set(network, hostDevnet(n, o, () => hosts.delete(network)));
        }
        if (failing) o.logger.info("looking for wanted devnets again");
        failing = false;
      } catch (e) {
        if (!failing) o.logger.warn(`could not look for wanted devnets: ${errorMessage(e)}`);
        failing = true;
      }
      await delay(pollMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  };
  const looking = look();
  return {
    async stop() {
      stopping.abort();
      await looking;
      await Promise.all([...hosts.values()].map((h) => h.stop()));
    },
  };
}

interface Held {
  anvil: Anvil;
  /** devnet_endpoints.term of this tenure: a write of an older one is refused. */
  term: bigint;
  savedBlock: number;
  /** Its block when it started: it holds the blocks it was started with and those mined since. */
  startedAt: number;
  demandCheckedAt: number;
  cleanup?: () => Promise<void>;
}

/**
 * The devnet of one network while it is wanted, run by the holder of its leader lock: started from
 * the saved state, registered, its state saved every `saveBlocks` blocks; on a stop, a lost lock or
 * idleness, saved once more, unregistered and stopped. `ended` is called when it ends by itself.
 */
function hostDevnet(network: Network, o: DevnetHostOptions, ended: () => void): Stoppable {
  const slug = network.slug;
  const log = o.logger.child({ network: slug });
  const closing = new AbortController();
  // Kept outside the worker's state: a step that fails starts over without it, and must not leak it.
  let held: Held | undefined;

  const wanted = async () => {
    const rows = await db().$queryRaw<{ fresh: boolean }[]>`
      SELECT wanted_at > now() - make_interval(secs => ${o.idleMs / 1000}) AS fresh FROM devnet_endpoints WHERE network = ${slug}`;
    return rows[0]?.fresh === true;
  };

  /** False when another tenure has begun since `h` (its state then wins). */
  const save = async (h: Held, dumped?: { head: number; state: Buffer }): Promise<boolean> => {
    const head = dumped?.head ?? (await h.anvil.blockNumber());
    const state = dumped?.state ?? (await h.anvil.dumpState());
    const saved = await db().$executeRaw`
      INSERT INTO devnet_states (network, state, block_number, saved_at)
      SELECT ${slug}, ${state}, ${head}, now()
      WHERE EXISTS (SELECT 1 FROM devnet_endpoints WHERE network = ${slug} AND term = ${h.term} FOR SHARE)
      ON CONFLICT (network) DO UPDATE SET state = EXCLUDED.state, block_number = EXCLUDED.block_number, saved_at = now()`;
    if (saved === 1) h.savedBlock = head;
    return saved === 1;
  };

  const launch = async (): Promise<Held> => {
    const dir = path.resolve(o.dataDir, slug);
    await mkdir(dir, { recursive: true });
    // anvil also keeps the state in its directory, written every 30 s and when it is stopped (even
    // by this process's death). When the last tenure was this host's (its term is the one last
    // registered), that file is at least as new as the saved state: a restart after a crash or a
    // kill loses nothing. Otherwise the saved state is the newest there is. Without either, a
    // state.json a single-process version kept here is loaded as it is.
    const termFile = path.join(dir, "term");
    const [rows, lastTerm] = await Promise.all([
      db().$queryRaw<{ state: Uint8Array; term: bigint | null }[]>`
        SELECT s.state, e.term FROM devnet_states s LEFT JOIN devnet_endpoints e ON e.network = s.network WHERE s.network = ${slug}`,
      readFile(termFile, "utf8").catch(() => undefined),
    ]);
    const saved = rows[0];
    if (saved && (lastTerm === undefined || lastTerm.trim() !== String(saved.term))) await writeFile(path.join(dir, "state.json"), await promisify(gunzip)(saved.state));
    const anvil = await startAnvil({ network, dir, blockTimeSec: o.blockTimeSec, host: o.host, advertiseHost: o.advertiseHost, retainBlocks: o.retainBlocks, logger: log });
    try {
      const registered = await db().$queryRaw<{ term: bigint }[]>`
        WITH r AS (
          INSERT INTO devnet_endpoints (network, url, holder, term, updated_at) VALUES (${slug}, ${anvil.url}, ${o.memberId}, 1, now())
          ON CONFLICT (network) DO UPDATE SET url = EXCLUDED.url, holder = EXCLUDED.holder, term = devnet_endpoints.term + 1, updated_at = now()
          RETURNING term)
        SELECT r.term FROM r CROSS JOIN LATERAL (SELECT pg_notify(${CHANNEL}, ${slug})) AS announced`;
      const head = await anvil.blockNumber();
      const h: Held = { anvil, term: registered[0]!.term, savedBlock: head, startedAt: head, demandCheckedAt: performance.now() };
      await writeFile(termFile, String(h.term));
      if (o.onStarted) {
        try {
          h.cleanup = (await o.onStarted({ network, url: anvil.url })) ?? undefined;
        } catch (e) {
          log.error(`devnet start-up hook failed: ${errorMessage(e)}`);
        }
      }
      return h;
    } catch (e) {
      await anvil.stop();
      throw e;
    }
  };

  /**
   * Restarts the devnet from its state trimmed to the newest `retainBlocks` blocks (no block mined
   * meanwhile: the chain goes on from the same head). Calls in between wait for the new URL, as
   * for a devnet starting (DevnetDirectory). False when another tenure has begun since `h`.
   */
  const compact = async (h: Held, keep: number): Promise<boolean> => {
    await h.anvil.setIntervalMining(0);
    const head = await h.anvil.blockNumber();
    const trimmed = await trimState(await h.anvil.dumpState(), keep);
    if (!(await save(h, { head, state: trimmed.state }))) return false;
    await release(false);
    // Without this tenure's term on file, launch loads the state just saved, not anvil's own file.
    await rm(path.join(o.dataDir, slug, "term"), { force: true });
    held = await launch();
    log.info(`restarted the devnet at block ${head} with its last ${trimmed.blocks} blocks (${Math.round(trimmed.state.length / 1024)} kB of state)`);
    return true;
  };

  /** Stops the running devnet, saving its state first unless `saving` is false. */
  const release = async (saving = true) => {
    const h = held;
    held = undefined;
    if (!h) return;
    await h.cleanup?.().catch(() => undefined);
    const alive = h.anvil.child.exitCode === null && h.anvil.child.signalCode === null;
    if (saving && alive) await save(h).catch((e: unknown) => log.warn(`could not save the devnet's state: ${errorMessage(e)}`));
    await db()
      .$executeRaw`
        WITH r AS (UPDATE devnet_endpoints SET url = NULL, holder = NULL, updated_at = now() WHERE network = ${slug} AND term = ${h.term} RETURNING network)
        SELECT pg_notify(${CHANNEL}, ${slug}) FROM r`
      .catch((e: unknown) => log.warn(`could not unregister the devnet: ${errorMessage(e)}`));
    await h.anvil.stop();
  };

  const handle = startWorker<Held>({
    kind: "evm-devnet",
    key: slug,
    leader: { databaseUrl: o.databaseUrl, pollMs: o.pollMs ?? 1000 },
    logger: log,
    init: async () => {
      // An anvil of a tenure that failed: the chain restarts from the saved state.
      await release();
      if (closing.signal.aborted || !(await wanted())) {
        ended();
        return WORKER_DONE;
      }
      held = await launch();
      return held;
    },
    step: async (h, ctx) => {
      await delay(o.blockTimeSec * 1000, undefined, { signal: AbortSignal.any([ctx.signal, closing.signal]) }).catch(() => undefined);
      if (closing.signal.aborted || ctx.signal.aborted) {
        // Stopped, or the lock was lost: with the lock lost the worker takes it again, or waits.
        await release();
        return closing.signal.aborted ? WORKER_DONE : 0;
      }
      const { exitCode, signalCode } = h.anvil.child;
      if (exitCode !== null || signalCode !== null) throw new Error(`anvil exited (${signalCode ?? `code ${exitCode}`})${h.anvil.lastError() ? `: ${h.anvil.lastError()}` : ""}`);
      if (performance.now() - h.demandCheckedAt >= Math.min(60_000, o.idleMs / 4)) {
        h.demandCheckedAt = performance.now();
        if (!(await wanted())) {
          log.info(`unused for ${Math.round(o.idleMs / 1000)} s; stopping the devnet`);
          await release();
          ended();
          return WORKER_DONE;
        }
      }
      const head = await h.anvil.blockNumber();
      const keep = o.retainBlocks ?? 0;
      // Started from a compacted state, it holds `keep` blocks; from genesis (or anvil's own file, taken as such), all.
      const heldFrom = h.startedAt >= keep ? h.startedAt - keep + 1 : 0;
      const saved = keep > 0 && head - heldFrom + 1 >= 2 * keep ? await compact(h, keep) : head < h.savedBlock + o.saveBlocks || (await save(h));
      if (!saved) {
        log.warn("another process runs this devnet now: stopping this one");
        await release(false);
        throw new Error("the devnet's registration was taken over");
      }
      // Compacted: the worker goes on with the new anvil.
      if (held && held !== h) held = Object.assign(h, held);
      return 0;
    },
    position: (h) => `devnet on ${h.anvil.url}`,
  });

  return {
    async stop() {
      closing.abort();
      await handle.stop();
      await release();
    },
  };
}
