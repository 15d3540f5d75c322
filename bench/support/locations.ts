import { performance } from 'node:perf_hooks';
import { sleep } from './abort';
import type { BenchStack } from './stack';

/**
 * Locations as the benchmarks make them, through the service's own routes (organization token, `?account_id=…`):
 * POST /location with the create fields, PATCH /location/update for what only an update carries (more hours,
 * categories, service items), and the waits until the provider knows them and no update is unfinished.
 */

const DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];
const CITIES = [
  { city: 'Springfield', postal: '62701', area: 'IL' },
  { city: 'Montréal', postal: 'H2X 1Y4', area: 'QC' },
  { city: 'Zürich', postal: '8001', area: 'ZH' },
  { city: 'Austin', postal: '73301', area: 'TX' },
];
const CATEGORIES = [
  { name: 'gcid:coffee_shop', displayName: 'Coffee shop' },
  { name: 'gcid:bakery', displayName: 'Bakery' },
  { name: 'gcid:cafe', displayName: 'Café' },
  { name: 'gcid:tea_house', displayName: 'Tea house' },
  { name: 'gcid:breakfast_restaurant', displayName: 'Breakfast restaurant' },
];

const two = (n: number) => String(n).padStart(2, '0');

function period(day: string, open: number, close: number, minutes: string | null) {
  return { open_day: day, open_time: { hours: two(open), minutes }, close_day: day, close_time: { hours: two(close), minutes: '30' } };
}

/**
 * The create body of the `index`-th location of a run (`run` makes its store code unique): every location differs
 * in length and content (5 to 7 days of hours, 0 to 3 special days, 0 to 2 additional phone numbers, address lines,
 * coordinates or not, descriptions of 0 to ~300 characters with accents, quotes and an emoji).
 */
export function locationCreateBody(run: string, index: number): Record<string, unknown> {
  const place = CITIES[index % CITIES.length]!;
  const days = DAYS.slice(0, 5 + (index % 3));
  const specials = Array.from({ length: index % 4 }, (_, k) =>
    k % 2 === 0
      ? { open_date: `2031-12-${two(24 + k)}`, is_closed: true }
      : { open_date: `2031-12-${two(24 + k)}`, close_date: `2031-12-${two(24 + k)}`, open_time: { hours: '10', minutes: null }, close_time: { hours: '14', minutes: '00' } },
  );
  const phones = index % 3 === 0 ? [] : Array.from({ length: index % 3 }, (_, k) => `+1 555 02${two(k)} ${1000 + index}`);
  const description =
    index % 5 === 0
      ? undefined
      : `Bench location #${index}: “quoted” \\ back-slashed, crème brûlée ☕ and a "JSON" test. `.repeat(1 + (index % 4));
  return {
    name: `Bench Coffee ${place.city} #${index}`,
    reference_id: `bench-${run}-${index}`,
    category_id: CATEGORIES[index % CATEGORIES.length]!.name,
    address: `${100 + index} Main Street`,
    postal: place.postal,
    city: place.city,
    country_code: 'US',
    administrative_area: place.area,
    additional_address_lines: index % 2 === 0 ? [] : [`Unit ${index}`, ...(index % 4 === 1 ? ['Back entrance'] : [])],
    ...(description === undefined ? {} : { description }),
    phone_number: `+1 555 0100 ${1000 + index}`,
    additional_phone_numbers: phones,
    website_uri: index % 3 === 2 ? null : `https://example.com/bench/${index}`,
    ...(index % 2 === 0 ? { latitude: 30 + index / 1000, longitude: -97 - index / 1000 } : {}),
    regular_hours: days.map((day, k) => period(day, 7 + (k % 3), 17 + (index % 4), k % 2 === 0 ? '00' : null)),
    special_hours: specials,
  };
}

/**
 * The update that adds what a create cannot carry: categories (primary and 0 to 3 more), more hours (0 to 2
 * types), service items (0 to 4, structured and free-form, some with a price).
 */
export function locationExtrasBody(index: number): Record<string, unknown> {
  const primary = CATEGORIES[index % CATEGORIES.length]!;
  const additional = CATEGORIES.filter((c) => c !== primary).slice(0, index % 4);
  const moreHours = ['DELIVERY', 'TAKEOUT'].slice(0, index % 3).map((type, k) => ({
    hoursTypeId: type,
    periods: DAYS.slice(0, 2 + ((index + k) % 4)).map((day) => period(day, 11 + k, 20, '15')),
  }));
  const serviceItems = Array.from({ length: index % 5 }, (_, k) =>
    k % 2 === 0
      ? { structuredServiceItem: { serviceTypeId: `job_type_id:bench_${k}`, ...(k === 2 ? { description: 'Made to order' } : {}) } }
      : {
          freeFormServiceItem: { category: primary.name, label: { displayName: `Bench item ${k}`, description: 'Fresh daily', languageCode: 'en' } },
          price: { currencyCode: 'USD', units: String(3 + k), nanos: 500_000_000 },
        },
  );
  return { categories: { primaryCategory: primary, additionalCategories: additional }, more_hours: moreHours, service_items: serviceItems };
}

async function call(stack: BenchStack, method: string, path: string, body: unknown, signal: AbortSignal): Promise<{ status: number; text: string }> {
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  return { status: response.status, text: await response.text() };
}

/** POST /location; the new location's id. */
export async function createLocation(stack: BenchStack, accountId: string, body: Record<string, unknown>, signal: AbortSignal): Promise<string> {
  const { status, text } = await call(stack, 'POST', `/location?account_id=${encodeURIComponent(accountId)}`, body, signal);
  if (status !== 200) throw new Error(`POST /location answered ${status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { payload: { location_id: string } }).payload.location_id;
}

export interface PatchAnswer {
  status: number;
  /** The update job's id, on a 200. */
  jobId: string | undefined;
  text: string;
}

/** PATCH /location/update with only the fields given. */
export async function patchLocation(
  stack: BenchStack,
  accountId: string,
  locationId: string,
  body: Record<string, unknown>,
  signal: AbortSignal,
): Promise<PatchAnswer> {
  const path = `/location/update?account_id=${encodeURIComponent(accountId)}&location_id=${encodeURIComponent(locationId)}`;
  const { status, text } = await call(stack, 'PATCH', path, body, signal);
  const jobId = status === 200 ? (JSON.parse(text) as { payload?: { id?: string } }).payload?.id : undefined;
  return { status, jobId, text };
}

/** Every location of the account: id and whether the provider knows it (GET /location, 250 a page). */
export async function listConnected(stack: BenchStack, accountId: string, signal: AbortSignal): Promise<{ id: string; connected: boolean }[]> {
  const all: { id: string; connected: boolean }[] = [];
  for (let page = 1; ; page += 1) {
    const path = `/location?account_id=${encodeURIComponent(accountId)}&per_page=250&page=${page}&include_fields=connected`;
    const { status, text } = await call(stack, 'GET', path, undefined, signal);
    if (status !== 200) throw new Error(`GET /location answered ${status}: ${text.slice(0, 300)}`);
    const answer = JSON.parse(text) as { data: { id: string; connected: boolean }[]; found: number };
    all.push(...answer.data);
    if (answer.data.length === 0 || all.length >= answer.found) return all;
  }
}

/** Updates of the account in `status` (GET /location/updates). */
export async function updatesIn(stack: BenchStack, accountId: string, status: string, signal: AbortSignal): Promise<number> {
  const { status: http, text } = await call(stack, 'GET', `/location/updates?account_id=${encodeURIComponent(accountId)}&status=${status}&per_page=1`, undefined, signal);
  if (http !== 200) throw new Error(`GET /location/updates answered ${http}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { payload: { found: number } }).payload.found;
}

/** Until every one of `ids` is connected (the provider knows it); throws after `timeoutMs`. */
export async function awaitConnected(stack: BenchStack, accountId: string, ids: string[], signal: AbortSignal, timeoutMs = 120_000): Promise<void> {
  const wanted = new Set(ids);
  const deadline = performance.now() + timeoutMs;
  while (!signal.aborted) {
    const waiting = (await listConnected(stack, accountId, signal)).filter((l) => wanted.has(l.id) && !l.connected).length;
    if (waiting === 0) return;
    if (performance.now() > deadline) throw new Error(`${waiting} location(s) not connected to the provider after ${timeoutMs / 1000} s`);
    await sleep(200, signal);
  }
}

/** Until no update of the account is QUEUED or RUNNING; throws after `timeoutMs`. */
export async function awaitNoUnfinishedUpdates(stack: BenchStack, accountId: string, signal: AbortSignal, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!signal.aborted) {
    const unfinished = (await updatesIn(stack, accountId, 'QUEUED', signal)) + (await updatesIn(stack, accountId, 'RUNNING', signal));
    if (unfinished === 0) return;
    if (performance.now() > deadline) throw new Error(`${unfinished} update(s) still QUEUED or RUNNING after ${timeoutMs / 1000} s`);
    await sleep(200, signal);
  }
}

/** `count` items through `work`, `concurrency` at a time; the first failure stops the rest and is thrown. */
export async function inLanes<T>(count: number, concurrency: number, work: (index: number) => Promise<T>, signal: AbortSignal): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  let failure: unknown;
  const lane = async () => {
    while (next < count && failure === undefined && !signal.aborted) {
      const index = next++;
      try {
        results[index] = await work(index);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error('a step failed with a non-Error', { cause: failure });
  return results;
}

/**
 * `count` locations in the account, with varied content (the create, then the update of what only an update
 * carries), `concurrency` requests at a time; then until the provider knows them all and no update is unfinished,
 * so nothing changes them afterwards. Their ids, in creation order.
 */
export async function seedLocations(
  stack: BenchStack,
  accountId: string,
  options: { count: number; run: string; concurrency?: number; extras?: boolean; signal: AbortSignal },
): Promise<string[]> {
  const { signal } = options;
  const ids = await inLanes(
    options.count,
    options.concurrency ?? 8,
    async (index) => {
      const id = await createLocation(stack, accountId, locationCreateBody(options.run, index), signal);
      if (options.extras !== false) {
        // Unconnected yet: applied at once (the publish sends the latest); connected: a job sends it.
        const answer = await patchLocation(stack, accountId, id, locationExtrasBody(index), signal);
        if (answer.status !== 200) throw new Error(`PATCH /location/update answered ${answer.status}: ${answer.text.slice(0, 300)}`);
      }
      return id;
    },
    signal,
  );
  await awaitConnected(stack, accountId, ids, signal);
  await awaitNoUnfinishedUpdates(stack, accountId, signal);
  return ids;
}
