import { z } from 'zod';
import {
  ALPHA_PLACES_PAGE_SIZE_MAX,
  ALPHA_PLACES_RADIUS_MAX_METERS,
  ALPHA_PLACES_TEXT_QUERY_MAX_LENGTH,
  type AlphaLocation,
  type AlphaPlace,
} from '../../src/providers/alpha/alpha.types';
import { FieldViolation, integerAt, isObject, objectAt, onlyKnown, stringAt } from './alpha-sandbox.validation';

/**
 * The places API's nearby text search over a market: the sandbox's own locations, the businesses a control put
 * there, and a synthetic market generated from the query, cell by cell, so that any point on Earth has competitors
 * and the same search always finds the same ones. docs/alpha-sandbox.md states the generator and the ranking exactly:
 * tests compute ranks from it by hand.
 */

export const EARTH_RADIUS_METERS = 6_371_008.8;
/** The synthetic market's cells: 0.01 degrees of latitude by 0.01 of longitude. */
export const CELL_DEGREES = 0.01;
const CELLS_PER_DEGREE = 100;
/** Beyond this latitude there is no synthetic market: near the poles a circle would span thousands of cells. */
export const SYNTHETIC_MAX_LATITUDE = 85;
const MAX_MARKET_BUSINESSES = 1000;
const SYNTHETIC_ID_PREFIX = 'synthetic-';

export const SYNTHETIC_NAME_PREFIXES = [
  'North', 'South', 'East', 'West', 'Central', 'Old Town', 'Riverside', 'Corner', 'Park', 'Market', 'Golden', 'Little',
] as const;
export const SYNTHETIC_STREETS = [
  'Main Street', 'High Street', 'Market Street', 'Station Road', 'Park Avenue', 'Church Lane', 'Mill Road', 'King Street',
] as const;

/** A search as the provider accepted it. */
export interface PlacesSearch {
  textQuery: string;
  latitude: number;
  longitude: number;
  radiusMeters: number;
  pageSize: number;
}

function numberAt(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new FieldViolation(field, `must be a number from ${min} to ${max}`);
  }
  return value;
}

/** The body of POST /v1/places:searchText; unknown fields are refused, as everywhere in the sandbox. */
export function validatePlacesSearch(body: unknown): PlacesSearch {
  if (!isObject(body)) throw new FieldViolation('request', 'the request body must be a JSON object');
  onlyKnown(body, ['textQuery', 'locationBias', 'pageSize'], '');
  if (body.textQuery === undefined) throw new FieldViolation('textQuery', 'is required');
  const textQuery = stringAt(body.textQuery, 'textQuery');
  if (textQuery.trim() === '') throw new FieldViolation('textQuery', 'must not be blank');
  if (textQuery.length > ALPHA_PLACES_TEXT_QUERY_MAX_LENGTH) {
    throw new FieldViolation('textQuery', `must be at most ${ALPHA_PLACES_TEXT_QUERY_MAX_LENGTH} characters`);
  }
  if (body.locationBias === undefined) throw new FieldViolation('locationBias', 'is required');
  const bias = objectAt(body.locationBias, 'locationBias');
  onlyKnown(bias, ['circle'], 'locationBias.');
  if (bias.circle === undefined) throw new FieldViolation('locationBias.circle', 'is required');
  const circle = objectAt(bias.circle, 'locationBias.circle');
  onlyKnown(circle, ['center', 'radius'], 'locationBias.circle.');
  if (circle.center === undefined) throw new FieldViolation('locationBias.circle.center', 'is required');
  const center = objectAt(circle.center, 'locationBias.circle.center');
  onlyKnown(center, ['latitude', 'longitude'], 'locationBias.circle.center.');
  const latitude = numberAt(center.latitude, 'locationBias.circle.center.latitude', -90, 90);
  const longitude = numberAt(center.longitude, 'locationBias.circle.center.longitude', -180, 180);
  const radiusMeters = numberAt(circle.radius, 'locationBias.circle.radius', 1, ALPHA_PLACES_RADIUS_MAX_METERS);
  const pageSize =
    body.pageSize === undefined ? ALPHA_PLACES_PAGE_SIZE_MAX : integerAt(body.pageSize, 'pageSize', 1, ALPHA_PLACES_PAGE_SIZE_MAX);
  return { textQuery, latitude, longitude, radiusMeters, pageSize };
}

/** Trimmed, lower-cased, runs of white space as one space: the form matching and the generator's seeds use. */
export function normalizeQuery(textQuery: string): string {
  return textQuery.trim().toLowerCase().split(/\s+/).join(' ');
}

const placeIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,200}$/, 'must be 1 to 200 letters, digits, _ . : or -')
  .refine((id) => !id.startsWith(SYNTHETIC_ID_PREFIX), `must not start with ${SYNTHETIC_ID_PREFIX} (the generator's)`);

const ratingSchema = z
  .number()
  .min(0)
  .max(5)
  .refine((rating) => Math.abs(rating * 10 - Math.round(rating * 10)) < 1e-9, 'must have at most one decimal');

/** A business a control puts in the market (PUT /_control/market). */
export const marketBusinessSchema = z.strictObject({
  id: placeIdSchema,
  name: z.string().trim().min(1).max(200),
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  rating: ratingSchema,
  userRatingCount: z.number().int().min(0).max(100_000_000),
  photoCount: z.number().int().min(0).max(1_000_000).default(0),
  types: z.array(z.string().regex(/^[a-z0-9_]{1,100}$/, 'must be lower-case letters, digits and _')).max(50).default([]),
  websiteUri: z.url({ protocol: /^https?$/ }).max(2048).optional(),
  hasOwnerPosts: z.boolean().default(false),
  /** Absent: the coordinates, as `lat, lng` with five decimals. */
  formattedAddress: z.string().min(1).max(500).optional(),
});

export const marketSchema = z.strictObject({
  businesses: z
    .array(marketBusinessSchema)
    .max(MAX_MARKET_BUSINESSES)
    .refine((businesses) => new Set(businesses.map((business) => business.id)).size === businesses.length, {
      message: 'ids must differ',
    }),
  synthetic: z.boolean(),
});

export type AlphaSandboxMarketBusinessInput = z.input<typeof marketBusinessSchema>;
export type AlphaSandboxMarketBusiness = z.output<typeof marketBusinessSchema>;
export type AlphaSandboxMarketInput = z.input<typeof marketSchema>;
/** The explicit part of the market, and whether the generator adds its businesses. */
export type AlphaSandboxMarket = z.output<typeof marketSchema>;

export function defaultMarket(): AlphaSandboxMarket {
  return { businesses: [], synthetic: true };
}

function coordinatesText(latitude: number, longitude: number): string {
  return `${latitude.toFixed(5)}, ${longitude.toFixed(5)}`;
}

export function placeOfBusiness(business: AlphaSandboxMarketBusiness): AlphaPlace {
  return {
    id: business.id,
    displayName: { text: business.name, languageCode: 'en' },
    formattedAddress: business.formattedAddress ?? coordinatesText(business.latitude, business.longitude),
    types: [...business.types],
    ...(business.types.length > 0 ? { primaryType: business.types[0] } : {}),
    rating: business.rating,
    userRatingCount: business.userRatingCount,
    ...(business.websiteUri !== undefined ? { websiteUri: business.websiteUri } : {}),
    location: { latitude: business.latitude, longitude: business.longitude },
    photoCount: business.photoCount,
    hasOwnerPosts: business.hasOwnerPosts,
    businessStatus: 'OPERATIONAL',
  };
}

/** `categories/gcid:coffee_shop`, `gcid:coffee_shop` -> `coffee_shop`. */
function typeOfCategory(name: string): string {
  return name.replace(/^categories\//, '').replace(/^gcid:/, '');
}

/**
 * A location of the sandbox as the places API shows it; undefined without coordinates (it is on no map) or place ID.
 * `reviews` are its reviews' average (one decimal) and count.
 */
export function placeOfLocation(
  location: AlphaLocation,
  reviews: { averageRating: number; totalReviewCount: number },
  hasOwnerPosts: boolean,
): AlphaPlace | undefined {
  const { latlng } = location;
  const id = location.metadata?.placeId;
  if (latlng === undefined || id === undefined) return undefined;
  const categories = [location.categories?.primaryCategory, ...(location.categories?.additionalCategories ?? [])];
  const types = [...new Set(categories.flatMap((category) => (category ? [typeOfCategory(category.name)] : [])))];
  const address = location.storefrontAddress;
  const formattedAddress = address
    ? [...(address.addressLines ?? []), [address.postalCode, address.locality].filter(Boolean).join(' '), address.regionCode]
        .filter((part) => part !== '')
        .join(', ')
    : coordinatesText(latlng.latitude, latlng.longitude);
  return {
    id,
    displayName: { text: location.title ?? '', languageCode: location.languageCode ?? 'en' },
    formattedAddress,
    types,
    ...(types.length > 0 ? { primaryType: types[0] } : {}),
    rating: reviews.averageRating,
    userRatingCount: reviews.totalReviewCount,
    ...(location.websiteUri !== undefined ? { websiteUri: location.websiteUri } : {}),
    location: { latitude: latlng.latitude, longitude: latlng.longitude },
    photoCount: 0,
    hasOwnerPosts,
    businessStatus: 'OPERATIONAL',
  };
}

const FNV_OFFSET_BASIS = 0x811c9dc5;

/** 32-bit FNV-1a over the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  return fnvBytes(fnvAscii(FNV_OFFSET_BASIS, ''), Buffer.from(text, 'utf8')) >>> 0;
}

/** FNV-1a continued over text known to be ASCII (a cell's indices), without encoding it first. */
function fnvAscii(hash: number, text: string): number {
  for (let index = 0; index < text.length; index += 1) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  return hash;
}

function fnvBytes(hash: number, bytes: Uint8Array): number {
  for (const byte of bytes) hash = Math.imul(hash ^ byte, 0x01000193);
  return hash;
}

/** mulberry32: a small PRNG whose sequence is fixed by its 32-bit seed; each call gives a number in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What every cell of one query's market shares, worked out once per search rather than once per cell. */
interface SyntheticQuery {
  /** Normalized (normalizeQuery). */
  query: string;
  bytes: Uint8Array;
  type: string;
  title: string;
}

function syntheticQuery(query: string): SyntheticQuery {
  return { query, bytes: Buffer.from(query, 'utf8'), type: query.split(' ').join('_'), title: titleCase(query) };
}

function titleCase(query: string): string {
  return query
    .split(' ')
    .map((word) => {
      const [first = '', ...rest] = [...word];
      return first.toUpperCase() + rest.join('');
    })
    .join(' ');
}

/**
 * The synthetic businesses of one cell for one (normalized) query. Cell (latCell, lngCell) spans latitudes
 * [latCell / 100, (latCell + 1) / 100) and longitudes likewise; the draws are taken in exactly this order. `keep`
 * (default: all) leaves out businesses by position before their places are built; the draws are the same.
 */
export function syntheticCell(
  latCell: number,
  lngCell: number,
  query: string | SyntheticQuery,
  keep: (latitude: number, longitude: number) => boolean = () => true,
): AlphaPlace[] {
  const { bytes, type, title } = typeof query === 'string' ? syntheticQuery(query) : query;
  // fnv1a32(`${latCell}:${lngCell}:${query}`), without building the string.
  const random = mulberry32(fnvBytes(fnvAscii(FNV_OFFSET_BASIS, `${latCell}:${lngCell}:`), bytes) >>> 0);
  const count = Math.floor(random() * 4);
  const places: AlphaPlace[] = [];
  for (let n = 0; n < count; n += 1) {
    const id = `${SYNTHETIC_ID_PREFIX}${latCell}-${lngCell}-${n}`;
    const latitude = (latCell + random()) / CELLS_PER_DEGREE;
    const longitude = (lngCell + random()) / CELLS_PER_DEGREE;
    const rating = (30 + Math.floor(random() * 21)) / 10;
    const userRatingCount = Math.floor(random() * 501);
    const photoCount = Math.floor(random() * 81);
    const prefix = SYNTHETIC_NAME_PREFIXES[Math.floor(random() * SYNTHETIC_NAME_PREFIXES.length)];
    const number = 1 + Math.floor(random() * 99);
    const house = 1 + Math.floor(random() * 200);
    const street = SYNTHETIC_STREETS[Math.floor(random() * SYNTHETIC_STREETS.length)];
    const hasWebsite = random() < 0.5;
    const hasOwnerPosts = random() < 0.3;
    if (!keep(latitude, longitude)) continue;
    places.push({
      id,
      displayName: { text: `${prefix} ${title} ${number}`, languageCode: 'en' },
      formattedAddress: `${house} ${street}`,
      types: [type],
      primaryType: type,
      rating,
      userRatingCount,
      ...(hasWebsite ? { websiteUri: `https://places.alpha.example/${id}` } : {}),
      location: { latitude, longitude },
      photoCount,
      hasOwnerPosts,
      businessStatus: 'OPERATIONAL',
    });
  }
  return places;
}

const toRadians = (degrees: number) => (degrees * Math.PI) / 180;

/** Great-circle distance on a sphere of EARTH_RADIUS_METERS: 2R·asin(√a), a the haversine of the central angle. */
export function haversineMeters(
  from: { latitude: number; longitude: number },
  to: { latitude: number; longitude: number },
): number {
  const phi1 = toRadians(from.latitude);
  const phi2 = toRadians(to.latitude);
  const dPhi = toRadians(to.latitude - from.latitude);
  const dLambda = toRadians(to.longitude - from.longitude);
  const a = Math.sin(dPhi / 2) ** 2 + Math.cos(phi1) * Math.cos(phi2) * Math.sin(dLambda / 2) ** 2;
  return 2 * EARTH_RADIUS_METERS * Math.asin(Math.sqrt(Math.min(1, a)));
}

/**
 * The synthetic businesses of every cell the circle can reach. The cells are those of the circle's bounding box (a
 * superset: the ranking drops what lies outside the radius), so the answer is that of one fixed, endless market.
 */
export function syntheticPlaces(search: PlacesSearch): AlphaPlace[] {
  const query = syntheticQuery(normalizeQuery(search.textQuery));
  const angle = search.radiusMeters / EARTH_RADIUS_METERS;
  // A hair more than the exact extent, so rounding never leaves out a cell the circle touches.
  const latSpan = (angle * 180) / Math.PI + 1e-9;
  const cosLatitude = Math.cos(toRadians(search.latitude));
  const ratio = cosLatitude <= 0 ? Infinity : Math.sin(angle) / cosLatitude;
  const lngSpan = ratio >= 1 ? 180 : (Math.asin(ratio) * 180) / Math.PI + 1e-9;

  const limit = SYNTHETIC_MAX_LATITUDE * CELLS_PER_DEGREE;
  const firstLat = Math.max(-limit, Math.floor((search.latitude - latSpan) * CELLS_PER_DEGREE));
  const lastLat = Math.min(limit - 1, Math.floor((search.latitude + latSpan) * CELLS_PER_DEGREE));
  const firstLng = Math.floor((search.longitude - lngSpan) * CELLS_PER_DEGREE);
  const lngCount = Math.min(360 * CELLS_PER_DEGREE, Math.floor((search.longitude + lngSpan) * CELLS_PER_DEGREE) - firstLng + 1);
  const center = { latitude: search.latitude, longitude: search.longitude };
  // Most of a large circle's businesses are outside it: they are not built as places only to be dropped.
  const inside = (latitude: number, longitude: number) =>
    haversineMeters(center, { latitude, longitude }) <= search.radiusMeters;
  const places: AlphaPlace[] = [];
  for (let latCell = firstLat; latCell <= lastLat; latCell += 1) {
    for (let step = 0; step < lngCount; step += 1) {
      // Across the antimeridian the cells go on from -180.
      const lngCell = wrapLngCell(firstLng + step);
      for (const place of syntheticCell(latCell, lngCell, query, inside)) places.push(place);
    }
  }
  return places;
}

function wrapLngCell(cell: number): number {
  const span = 360 * CELLS_PER_DEGREE;
  return ((((cell + span / 2) % span) + span) % span) - span / 2;
}

/** Every word of the query is a substring of the lower-cased name, or of the lower-cased types joined with spaces. */
export function matchesQuery(place: AlphaPlace, query: string): boolean {
  const name = place.displayName.text.toLowerCase();
  const types = place.types.join(' ').toLowerCase();
  return query.split(' ').every((word) => name.includes(word) || types.includes(word));
}

/** rating · ln(1 + userRatingCount) / (1 + distance in km): good, much-reviewed and near ranks first. */
export function placeScore(place: AlphaPlace, distanceMeters: number): number {
  return (place.rating * Math.log(1 + place.userRatingCount)) / (1 + distanceMeters / 1000);
}

/**
 * The answer to a search: the candidates within the radius (distance <= radius) that match, by score descending,
 * ties by id ascending (JavaScript string order), at most pageSize. Nothing is rounded before comparing.
 */
export function rankPlaces(search: PlacesSearch, candidates: readonly AlphaPlace[]): AlphaPlace[] {
  const query = normalizeQuery(search.textQuery);
  const center = { latitude: search.latitude, longitude: search.longitude };
  const before = (a: Ranked, b: Ranked) => a.score > b.score || (a.score === b.score && a.place.id < b.place.id);
  // The best pageSize (at most 20) of thousands of candidates: kept in order as they come, without sorting them all.
  const best: Ranked[] = [];
  for (const place of candidates) {
    const distance = haversineMeters(center, place.location);
    if (distance > search.radiusMeters || !matchesQuery(place, query)) continue;
    const ranked = { place, score: placeScore(place, distance) };
    if (best.length === search.pageSize && !before(ranked, best[best.length - 1]!)) continue;
    let at = best.length;
    while (at > 0 && before(ranked, best[at - 1]!)) at -= 1;
    best.splice(at, 0, ranked);
    if (best.length > search.pageSize) best.pop();
  }
  return best.map(({ place }) => place);
}

interface Ranked {
  place: AlphaPlace;
  score: number;
}
