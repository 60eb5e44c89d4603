export * from "./hex";
export * from "./merkle";
export * from "./tx";
export * from "./header";
export * from "./keys";
export * from "./proto";
export * from "./timestamp";
export * from "./block-hashes";
