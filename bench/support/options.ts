/**
 * The numeric command-line options every bench reads: a figure outside its range stops the
 * bench with the option's name before anything starts, rather than measuring nonsense.
 */
function parse(name: string, raw: string | undefined, fallback: number, min: number, max: number, integer: boolean): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min || value > max) {
    const kind = integer ? 'an integer' : 'a number';
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new Error(`--${name} must be ${kind} ${range}, not ${raw}`);
  }
  return value;
}

/** A whole-number option, e.g. `--posts 40`. */
export function integerOption(name: string, raw: string | undefined, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  return parse(name, raw, fallback, min, max, true);
}

/** A fractional option, e.g. `--rate 0.5`. */
export function decimalOption(name: string, raw: string | undefined, fallback: number, min: number): number {
  return parse(name, raw, fallback, min, Number.MAX_SAFE_INTEGER, false);
}
