/**
 * The arithmetic of a competitor scan, apart from where its data comes from: the grid of dots around the client,
 * and from the ranked search results at each dot, the client's figures, its competitors aggregated over the dots,
 * and the strategy numbers. Pure functions of their inputs, so a scan's numbers can be worked out by hand.
 */

/** A business as a search at one dot shows it. */
export interface ScanPlace {
  placeId: string;
  name: string;
  address: string;
  categories: string[];
  rating: number;
  reviews: number;
  photos: number;
  website: string | null;
  hasPosts: boolean;
  lat: number;
  lng: number;
}

export interface GridDot {
  dotId: string;
  /** 0 for the centre. */
  ring: number;
  lat: number;
  lng: number;
}

const EARTH_RADIUS_KM = 6371.0088;
const KM_PER_DEGREE_LAT = (Math.PI * EARTH_RADIUS_KM) / 180;

/**
 * The centre and `rings` square rings around it, `radiusKm / rings` apart: ring k has 8k dots, so a scan has
 * 1 + 4·rings·(rings + 1) dots. Dots are numbered from the centre outwards, each ring clockwise from its north-west
 * corner. Longitude steps are widened by 1/cos(latitude), so the grid is square on the ground.
 */
export function gridDots(center: { lat: number; lng: number }, radiusKm: number, rings: number): GridDot[] {
  const dots: GridDot[] = [{ dotId: 'dot-0', ring: 0, lat: center.lat, lng: center.lng }];
  if (rings === 0) return dots;
  const stepKm = radiusKm / rings;
  const latStep = stepKm / KM_PER_DEGREE_LAT;
  const lngStep = stepKm / (KM_PER_DEGREE_LAT * Math.cos((center.lat * Math.PI) / 180));
  for (let ring = 1; ring <= rings; ring += 1) {
    // The ring's cells as (row, column) offsets, clockwise from the north-west corner: top edge, right, bottom, left.
    const cells: [number, number][] = [];
    for (let column = -ring; column < ring; column += 1) cells.push([ring, column]);
    for (let row = ring; row > -ring; row -= 1) cells.push([row, ring]);
    for (let column = ring; column > -ring; column -= 1) cells.push([-ring, column]);
    for (let row = -ring; row < ring; row += 1) cells.push([row, -ring]);
    for (const [row, column] of cells) {
      dots.push({ dotId: `dot-${dots.length}`, ring, lat: round(center.lat + row * latStep, 7), lng: round(center.lng + column * lngStep, 7) });
    }
  }
  return dots;
}

/** How many dots, so provider searches, a scan of `rings` rings makes: the length of its `gridDots`. */
export function dotCount(rings: number): number {
  return 1 + 4 * rings * (rings + 1);
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** What a search at each dot answered, in rank order. */
export interface DotResults {
  dot: GridDot;
  places: ScanPlace[];
}

export interface Appearances {
  appearances: number;
  top3appearances: number;
  top5appearances: number;
  top10appearances: number;
}

export interface ScanCompetitor extends Appearances {
  place: ScanPlace;
  /** Rank at the centre dot, or null when the centre's search did not show it. */
  centerRank: number | null;
}

export interface ScanOutcome {
  /** Per dot: the client's rank there (null: not in the results). */
  dots: { dot: GridDot; rank: number | null }[];
  client: Appearances & { centerRank: number | null; place: ScanPlace | null; dots: Record<'dot1' | 'dot2' | 'dot3' | 'dot4' | 'dot5', number> };
  /** Every other business seen, most appearances first (then best centre rank, then name). */
  competitors: ScanCompetitor[];
  strategy: {
    reviewsToTop: Record<1 | 3 | 5, number>;
    imagesToTop: Record<1 | 3 | 5, number>;
  };
}

function count(ranks: number[]): Appearances {
  return {
    appearances: ranks.length,
    top3appearances: ranks.filter((rank) => rank <= 3).length,
    top5appearances: ranks.filter((rank) => rank <= 5).length,
    top10appearances: ranks.filter((rank) => rank <= 10).length,
  };
}

/**
 * The scan's figures from the results at every dot; the client is the business with `clientPlaceId`. What each
 * figure means: docs/beta-and-scans.md, the list under "The figures".
 */
export function computeScan(results: DotResults[], clientPlaceId: string): ScanOutcome {
  const ranksOf = new Map<string, number[]>();
  const places = new Map<string, ScanPlace>();
  for (const { places: ranked } of results) {
    ranked.forEach((place, index) => {
      places.set(place.placeId, places.get(place.placeId) ?? place);
      ranksOf.set(place.placeId, [...(ranksOf.get(place.placeId) ?? []), index + 1]);
    });
  }
  const center = results.find((result) => result.dot.ring === 0)?.places ?? [];
  const centerRank = (placeId: string) => {
    const index = center.findIndex((place) => place.placeId === placeId);
    return index < 0 ? null : index + 1;
  };
  const rankAt = (dotPlaces: ScanPlace[], placeId: string) => {
    const index = dotPlaces.findIndex((place) => place.placeId === placeId);
    return index < 0 ? null : index + 1;
  };

  const clientRanks = ranksOf.get(clientPlaceId) ?? [];
  const clientPlace = places.get(clientPlaceId) ?? null;
  const clientCenterRank = centerRank(clientPlaceId);
  const exactly = (n: number) => clientRanks.filter((rank) => rank === n).length;

  const competitors: ScanCompetitor[] = [...places.values()]
    .filter((place) => place.placeId !== clientPlaceId)
    .map((place) => ({ place, centerRank: centerRank(place.placeId), ...count(ranksOf.get(place.placeId)!) }))
    .sort(
      (a, b) =>
        b.appearances - a.appearances ||
        (a.centerRank ?? Number.MAX_SAFE_INTEGER) - (b.centerRank ?? Number.MAX_SAFE_INTEGER) ||
        a.place.name.localeCompare(b.place.name) ||
        a.place.placeId.localeCompare(b.place.placeId),
    );

  const needed = (n: 1 | 3 | 5, measure: (place: ScanPlace) => number, extra: number) => {
    if (clientCenterRank !== null && clientCenterRank <= n) return 0;
    const others = center.filter((place) => place.placeId !== clientPlaceId);
    const target = others[Math.min(n, others.length) - 1];
    if (!target) return 0;
    return Math.max(0, measure(target) + extra - (clientPlace ? measure(clientPlace) : 0));
  };

  return {
    dots: results.map(({ dot, places: ranked }) => ({ dot, rank: rankAt(ranked, clientPlaceId) })),
    client: {
      ...count(clientRanks),
      centerRank: clientCenterRank,
      place: clientPlace,
      dots: { dot1: exactly(1), dot2: exactly(2), dot3: exactly(3), dot4: exactly(4), dot5: exactly(5) },
    },
    competitors,
    strategy: {
      reviewsToTop: { 1: needed(1, (place) => place.reviews, 1), 3: needed(3, (place) => place.reviews, 1), 5: needed(5, (place) => place.reviews, 1) },
      imagesToTop: { 1: needed(1, (place) => place.photos, 0), 3: needed(3, (place) => place.photos, 0), 5: needed(5, (place) => place.photos, 0) },
    },
  };
}
