/** Command-line options shared by the benchmarks. */

/**
 * A reader of whole-number options for a benchmark with the given usage text: the option's value,
 * or `fallback` when it is not given; a value out of range fails with the usage.
 */
export function wholeNumberOption(usage: string) {
  return (raw: string | undefined, fallback: number, name: string, { min = 1, max = Infinity, unit }: { min?: number; max?: number; unit?: string } = {}): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      const range = max === Infinity ? `>= ${min}` : `from ${min} to ${max}`;
      throw new Error(`--${name} must be a whole number${unit ? ` of ${unit}` : ""} ${range}, got "${raw}"\n${usage}`);
    }
    return n;
  };
}
