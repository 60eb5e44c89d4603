/**
 * One anvil devnet per EVM network in the cluster. A process that needs a network's devnet (a web
 * process's node endpoint, a webhook follower) marks it wanted in devnet_endpoints and reads its URL
 * there (DevnetDirectory). Worker processes look for wanted networks; for each, the one holding the
 * leader lock `evm-devnet:<network>` runs anvil from the state last saved in devnet_states, registers
 * its URL, saves the state every EVM_DEVNET_SAVE_BLOCKS blocks and at a clean stop, and stops it once
 * nobody wanted it for EVM_DEVNET_IDLE_MS. The others wait on the lock to take over. The holder's
 * writes are fenced by its lock's term (checkTerm): once another worker has taken over, they are refused.
 */
import { mkdir, writeFile } from "node:fs/promises";
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
import { checkTerm, LeadershipLostError, type LeaderTerm } from "@/lib/workers/leader-lock";
import type { Transaction } from "@/lib/workers/cursor";
import { startWorker, WORKER_DONE, type WorkerContext, type WorkerDone } from "@/lib/workers/worker";
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
  /** The lock's term it was started under: its writes are refused once another worker took over. */
  term: LeaderTerm | undefined;
  savedBlock: number;
  /** Its block when it started: it holds the blocks it was started with and those mined since. */
  startedAt: number;
  demandCheckedAt: number;
  cleanup?: () => Promise<void>;
}

/**
 * The devnet of one network while it is wanted, run by the holder of its leader lock: started from
 * the saved state, registered, its state saved every `saveBlocks` blocks; on a stop, a lost lock or
 * idleness, saved once more, unregistered and stopped. Each of these writes is refused once another
 * worker has taken the lock over. `ended` is called when it ends by itself.
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

  /** A write of the holder of `term`, refused (LeadershipLostError, nothing written) once another worker took over. */
  const fenced = (term: LeaderTerm | undefined, write: (tx: Transaction) => Promise<unknown>) =>
    db().$transaction(async (tx) => {
      await checkTerm(tx, term);
      await write(tx);
    });

  /** Saves the devnet's state (or `dumped`, a state taken from it), refused once its term is over. */
  const save = async (h: Held, dumped?: { head: number; state: Buffer }): Promise<void> => {
    const head = dumped?.head ?? (await h.anvil.blockNumber());
    const state = dumped?.state ?? (await h.anvil.dumpState());
    await fenced(h.term, (tx) => tx.$executeRaw`
      INSERT INTO devnet_states (network, state, block_number, saved_at) VALUES (${slug}, ${state}, ${head}, now())
      ON CONFLICT (network) DO UPDATE SET state = EXCLUDED.state, block_number = EXCLUDED.block_number, saved_at = now()`);
    h.savedBlock = head;
  };

  const launch = async (term: LeaderTerm | undefined): Promise<Held> => {
    const dir = path.resolve(o.dataDir, slug);
    await mkdir(dir, { recursive: true });
    // The saved state is the newest one that counts: anvil's own file here (written every 30 s and
    // when it stops) may hold blocks past it, but also a chain another holder has replaced since.
    // Without a saved state, a state.json a single-process version kept here is loaded as it is.
    const saved = (await db().$queryRaw<{ state: Uint8Array }[]>`SELECT state FROM devnet_states WHERE network = ${slug}`)[0];
    if (saved) await writeFile(path.join(dir, "state.json"), await promisify(gunzip)(saved.state));
    const anvil = await startAnvil({ network, dir, blockTimeSec: o.blockTimeSec, host: o.host, advertiseHost: o.advertiseHost, retainBlocks: o.retainBlocks, logger: log });
    try {
      // The NOTIFY goes out when the registration commits, and not at all when it is refused.
      await fenced(term, (tx) => tx.$executeRaw`
        WITH r AS (
          INSERT INTO devnet_endpoints (network, url, holder, updated_at) VALUES (${slug}, ${anvil.url}, ${o.memberId}, now())
          ON CONFLICT (network) DO UPDATE SET url = EXCLUDED.url, holder = EXCLUDED.holder, updated_at = now()
          RETURNING network)
        SELECT pg_notify(${CHANNEL}, ${slug}) FROM r`);
      const head = await anvil.blockNumber();
      const h: Held = { anvil, term, savedBlock: head, startedAt: head, demandCheckedAt: performance.now() };
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
   * Stops the running devnet, saving its state (unless `saving` is false: it was just saved) and
   * clearing its registration first while its term lasts. Once a write of its term was refused
   * (`fencedOut`, or here), it writes nothing more: the new holder's state and registration stand.
   */
  const release = async (fencedOut = false, saving = true) => {
    const h = held;
    held = undefined;
    if (!h) return;
    await h.cleanup?.().catch(() => undefined);
    const alive = h.anvil.child.exitCode === null && h.anvil.child.signalCode === null;
    if (!fencedOut) {
      try {
        if (alive && saving) {
          await save(h).catch((e: unknown) => {
            if (e instanceof LeadershipLostError) throw e;
            log.warn(`could not save the devnet's state: ${errorMessage(e)}`);
          });
        }
        await fenced(h.term, (tx) => tx.$executeRaw`
          WITH r AS (UPDATE devnet_endpoints SET url = NULL, holder = NULL, updated_at = now() WHERE network = ${slug} RETURNING network)
          SELECT pg_notify(${CHANNEL}, ${slug}) FROM r`);
      } catch (e) {
        if (e instanceof LeadershipLostError) log.warn(`stopping the devnet without saving its state or clearing its registration: ${e.message}`);
        else log.warn(`could not unregister the devnet: ${errorMessage(e)}`);
      }
    }
    await h.anvil.stop();
  };

  /**
   * Restarts the devnet from its state trimmed to the newest `keep` blocks, in the same tenure (no
   * block mined meanwhile: the chain goes on from the same head). Calls in between wait for the new
   * URL, as for a devnet starting (DevnetDirectory). The trimmed state is saved under the term
   * first: a holder whose term is over restarts nothing.
   */
  const compact = async (h: Held, keep: number): Promise<Held> => {
    await h.anvil.setIntervalMining(0);
    const head = await h.anvil.blockNumber();
    const trimmed = await trimState(await h.anvil.dumpState(), keep);
    await save(h, { head, state: trimmed.state });
    await release(false, false);
    held = await launch(h.term);
    log.info(`restarted the devnet at block ${head} with its last ${trimmed.blocks} blocks (${Math.round(trimmed.state.length / 1024)} kB of state)`);
    return held;
  };

  /** One block time of running the devnet: stops it when asked, lost or idle, saves it every `saveBlocks` blocks. */
  const tend = async (h: Held, ctx: WorkerContext): Promise<number | WorkerDone> => {
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
    if (keep > 0 && head - heldFrom + 1 >= 2 * keep) {
      // The worker goes on with the new anvil (its state is this object).
      Object.assign(h, await compact(h, keep));
      held = h;
    } else if (head >= h.savedBlock + o.saveBlocks) await save(h);
    return 0;
  };

  const handle = startWorker<Held>({
    kind: "evm-devnet",
    key: slug,
    leader: { databaseUrl: o.databaseUrl, pollMs: o.pollMs ?? 1000 },
    logger: log,
    init: async (ctx) => {
      // An anvil of a tenure that lost its lock between two steps: the chain restarts from the saved state.
      await release();
      if (closing.signal.aborted || !(await wanted())) {
        ended();
        return WORKER_DONE;
      }
      held = await launch(ctx.term);
      return held;
    },
    step: async (h, ctx) => {
      try {
        return await tend(h, ctx);
      } catch (e) {
        // Released now, under this term: the next tenure's term, even this process's, refuses this
        // one's writes. Nothing is written once one was refused: the worker logs the lost lock.
        await release(e instanceof LeadershipLostError);
        throw e;
      }
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
