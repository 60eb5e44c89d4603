// Prisma's schema engine compiled to WebAssembly (@prisma/schema-engine-wasm), talking to
// PostgreSQL through the node-postgres driver adapter. Stands in for the native engine that
// `prisma migrate` needs and that cannot be downloaded here.
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  bindMigrationAwareSqlAdapterFactory,
  ColumnTypeEnum,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQueryable,
} from "@prisma/driver-adapter-utils";
import type * as SchemaEngineWasm from "@prisma/schema-engine-wasm";
import type { SchemaEngine } from "@prisma/schema-engine-wasm";
import pg from "pg";
import { debugSettings } from "@/lib/env";
import { componentLogger } from "@/lib/log";

export type { SchemaEngine } from "@prisma/schema-engine-wasm";

type WasmBindings = typeof SchemaEngineWasm & {
  __wbg_set_wasm(exports: WebAssembly.Exports): void;
};

let bindings: Promise<WasmBindings> | undefined;
let instances = 0;

/**
 * The package entry point imports the .wasm file as an ES module, which Node 20 refuses, so
 * load the wasm-bindgen glue and instantiate the module ourselves (once per process).
 */
function loadBindings(): Promise<WasmBindings> {
  bindings ??= (async () => {
    installPanicRegistry();
    const require = createRequire(import.meta.url);
    const gluePath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
    // A fresh copy of the glue module per instance: its state is tied to one wasm memory.
    const glueUrl = `${pathToFileURL(gluePath).href}?instance=${++instances}`;
    const glue = (await import(/* webpackIgnore: true */ /* turbopackIgnore: true */ glueUrl)) as WasmBindings;
    const bytes = await readFile(path.join(path.dirname(gluePath), "schema_engine_bg.wasm"));
    const imports: WebAssembly.ModuleImports = { ...(glue as unknown as WebAssembly.ModuleImports) };
    // The engine arms timers (timeouts around its work) and never clears them: unreferenced,
    // they don't keep a finished process alive for ~10 s. Open connections still do while it works.
    for (const name of Object.keys(imports).filter((n) => n.startsWith("__wbg_setTimeout_"))) {
      const setTimer = imports[name] as (...args: unknown[]) => unknown;
      imports[name] = (...args: unknown[]) => {
        const timer = setTimer(...args);
        (timer as NodeJS.Timeout | undefined)?.unref?.();
        return timer;
      };
    }
    const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": imports });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return glue;
  })();
  bindings.catch(() => (bindings = undefined));
  return bindings;
}

/**
 * A Rust panic inside the engine surfaces in JS as "RuntimeError: unreachable", possibly as an
 * uncaught exception from a callback. The engine first reports the panic message through this
 * global, which it expects to exist: print it, as it may never reach our error handling.
 */
const panicRegistry = {
  message: "",
  set_message(msg: string) {
    this.message = msg;
    componentLogger("schema-engine").error(`panic: ${msg}`);
  },
};

function installPanicRegistry(): void {
  (globalThis as { PRISMA_WASM_PANIC_REGISTRY?: typeof panicRegistry }).PRISMA_WASM_PANIC_REGISTRY = panicRegistry;
}

/**
 * Runs `fn` with a schema engine connected to `url`, then frees it. Commands that replay
 * migrations (diff from migrations) get a temporary shadow database on the same server, so
 * the user needs the CREATEDB privilege there.
 */
export async function withSchemaEngine<T>(url: string, fn: (engine: SchemaEngine) => Promise<T>): Promise<T> {
  const { SchemaEngine } = await loadBindings();
  const adapters = new PgAdapters(url);
  const log = componentLogger("schema-engine");
  const debug = debugSettings().schemaEngine ? (engine: unknown) => log.info({ engine }, "schema engine message") : () => {};
  try {
    const engine = await SchemaEngine.new({ datamodels: undefined }, debug, bindMigrationAwareSqlAdapterFactory(adapters));
    try {
      return await fn(engine);
    } finally {
      try {
        engine.free();
      } catch {
        // already unusable after a panic
      }
    }
  } catch (err) {
    // After a panic the instance is poisoned: instantiate a fresh one next time.
    if (err instanceof WebAssembly.RuntimeError) bindings = undefined;
    throw engineError(err);
  } finally {
    // The engine can't run async JS when freed: close its pools here, or they outlive it.
    await adapters.disposeAll();
  }
}

/** The driver adapter factory handed to the engine, keeping track of what it opened. */
class PgAdapters implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = "postgres";
  readonly adapterName = "@prisma/adapter-pg";
  private readonly open = new Set<() => Promise<void>>();

  constructor(private readonly url: string) {}

  connect(): Promise<SqlDriverAdapter> {
    return this.track(this.url);
  }

  // PrismaPg's own connectToShadowDb spreads { connectionString, database } into the pool
  // config, and node-postgres lets the connection string win: the "shadow" connection would
  // be the main database. Build the shadow URL explicitly instead.
  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    const name = `prisma_migrate_shadow_db_${randomUUID().replaceAll("-", "")}`;
    await adminQuery(this.url, `CREATE DATABASE "${name}"`);
    const shadowUrl = new URL(this.url);
    shadowUrl.pathname = `/${name}`;
    return this.track(shadowUrl.toString(), () => adminQuery(this.url, `DROP DATABASE IF EXISTS "${name}"`));
  }

  async disposeAll(): Promise<void> {
    await Promise.allSettled([...this.open].map((dispose) => dispose()));
  }

  private async track(url: string, afterDispose?: () => Promise<void>): Promise<SqlDriverAdapter> {
    const pool = new pg.Pool({ connectionString: url });
    pool.on("connect", reportCharAsText);
    let adapter: SqlDriverAdapter;
    try {
      adapter = await new PrismaPg(pool, { disposeExternalPool: true }).connect();
    } catch (err) {
      await afterDispose?.();
      throw err;
    }
    typeCharColumns(adapter);
    // @prisma/adapter-pg cuts a script at every ";", inside function bodies and comments too, and
    // runs the pieces one by one. PostgreSQL reads a script sent as one simple query itself and
    // runs it in one implicit transaction, as the native engine behind `prisma migrate deploy`
    // sends it: a migration applies whole or not at all. (No arguments: node-postgres then sends
    // a simple query, which may hold many statements.)
    adapter.executeScript = async (script) => {
      await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
    };
    const startTransaction = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => typeCharColumns(await startTransaction(isolationLevel));
    const dispose = adapter.dispose.bind(adapter);
    let disposed: Promise<void> | undefined;
    const disposeOnce = () => {
      disposed ??= (async () => {
        this.open.delete(disposeOnce);
        await dispose();
        await afterDispose?.();
      })();
      return disposed;
    };
    this.open.add(disposeOnce);
    adapter.dispose = disposeOnce;
    return adapter;
  }
}

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

/** Result rows -> indexes of their columns of type "char"; see reportCharAsText. */
const charColumns = new WeakMap<object, number[]>();

function typeCharColumns<Q extends SqlQueryable>(queryable: Q): Q {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query) => {
    const result = await queryRaw(query);
    for (const index of charColumns.get(result.rows) ?? []) result.columnTypes[index] = ColumnTypeEnum.Character;
    return result;
  };
  return queryable;
}

/**
 * The engine's catalog queries return columns of PostgreSQL's internal one-byte "char" type
 * (pg_constraint.contype...), which @prisma/adapter-pg 7.10 rejects ("Column type 'char' could
 * not be deserialized"; with PostgreSQL 18 every NOT NULL column has such a constraint row).
 * node-postgres reads these values as strings already: have the adapter accept them as text,
 * and remember which columns they were so queryRaw can type them as the characters the engine
 * expects.
 */
function reportCharAsText(client: pg.PoolClient): void {
  type AnyQuery = (...args: unknown[]) => unknown;
  const query = client.query.bind(client) as AnyQuery;
  const relabel = (result: unknown) => {
    for (const r of Array.isArray(result) ? result : [result]) {
      const { fields, rows } = (r ?? {}) as Partial<pg.QueryResult>;
      if (!fields || !rows) continue;
      const indexes = fields.flatMap((field, index) => (field.dataTypeID === PG_CHAR_OID ? [index] : []));
      if (indexes.length === 0) continue;
      for (const index of indexes) fields[index]!.dataTypeID = PG_TEXT_OID;
      charColumns.set(rows, indexes);
    }
    return result;
  };
  (client as unknown as { query: AnyQuery }).query = (...args) => {
    const callback = args.at(-1);
    if (typeof callback === "function") {
      args[args.length - 1] = (err: unknown, result: unknown) => (callback as AnyQuery)(err, err ? result : relabel(result));
      return query(...args);
    }
    const returned = query(...args);
    return returned instanceof Promise ? returned.then(relabel) : returned;
  };
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The engine rejects with errors whose message may be a JSON user-facing error; unwrap it. */
function engineError(err: unknown): Error {
  if (err instanceof WebAssembly.RuntimeError && panicRegistry.message) {
    const message = panicRegistry.message;
    panicRegistry.message = "";
    return new Error(`The schema engine crashed: ${message}`, { cause: err });
  }
  if (!(err instanceof Error)) return new Error(String(err));
  try {
    const parsed = JSON.parse(err.message) as { message?: unknown; error_code?: unknown };
    if (typeof parsed.message === "string") {
      const code = typeof parsed.error_code === "string" ? `${parsed.error_code}: ` : "";
      return new Error(`${code}${parsed.message}`, { cause: err });
    }
  } catch {
    // not JSON: keep as is
  }
  return err;
}
