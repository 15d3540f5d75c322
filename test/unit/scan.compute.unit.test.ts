import { computeScan, dotCount, gridDots, type DotResults, type GridDot, type ScanPlace } from '../../src/competitor-scan/scan.compute';

/** Kilometres per degree of latitude on the mean Earth radius (6371.0088 km): π·R/180. */
const KM_PER_DEGREE = (Math.PI * 6371.0088) / 180;

const place = (placeId: string, figures: Partial<ScanPlace> = {}): ScanPlace => ({
  placeId,
  name: placeId.toUpperCase(),
  address: `${placeId} street`,
  categories: ['Bakery'],
  rating: 4.5,
  reviews: 0,
  photos: 0,
  website: null,
  hasPosts: false,
  lat: 0,
  lng: 0,
  ...figures,
});

const centre: GridDot = { dotId: 'dot-0', ring: 0, lat: 0, lng: 0 };
const ringDot = (index: number): GridDot => ({ dotId: `dot-${index}`, ring: 1, lat: 0, lng: 0 });
const at = (dot: GridDot, ...places: ScanPlace[]): DotResults => ({ dot, places });

describe('the grid', () => {
  it.each([0, 1, 2, 3])('of %i rings has dotCount dots, numbered from the centre outwards', (rings) => {
    const dots = gridDots({ lat: 48.8566, lng: 2.3522 }, 3, rings);
    // 1 + 4·r·(r + 1): 1, 9, 25, 49.
    expect(dots).toHaveLength([1, 9, 25, 49][rings]!);
    expect(dotCount(rings)).toBe(dots.length);
    expect(dots.map((dot) => dot.dotId)).toEqual(dots.map((_, index) => `dot-${index}`));
    // Ring k holds 8k dots, in order.
    expect(dots.map((dot) => dot.ring)).toEqual([0, ...Array.from({ length: rings }, (_, k) => Array.from({ length: 8 * (k + 1) }, () => k + 1)).flat()]);
    expect(dots[0]).toEqual({ dotId: 'dot-0', ring: 0, lat: 48.8566, lng: 2.3522 });
  });

  it('goes clockwise from the north-west corner, one step apart', () => {
    // One ring of 1 km on the equator: a step is 1 km, 1/KM_PER_DEGREE degrees both ways (cos 0 = 1).
    const step = 1 / KM_PER_DEGREE;
    const dots = gridDots({ lat: 0, lng: 10 }, 1, 1);
    const offsets = dots.slice(1).map((dot) => [Math.round(dot.lat / step), Math.round((dot.lng - 10) / step)]);
    // NW, N, NE, E, SE, S, SW, W as (north, east) steps.
    expect(offsets).toEqual([[1, -1], [1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1]]);
    expect(dots[2]!.lat).toBeCloseTo(step, 6);
  });

  it('is square on the ground: longitude steps widen by 1/cos(latitude)', () => {
    // At 60° north cos = 1/2, so one step east is twice as many degrees as one step north. Two rings over 4 km: 2 km steps.
    const dots = gridDots({ lat: 60, lng: 0 }, 4, 2);
    const north = dots[2]!; // ring 1, (1, 0)
    const east = dots[4]!; // ring 1, (0, 1)
    expect((north.lat - 60) * KM_PER_DEGREE).toBeCloseTo(2, 3);
    expect(east.lng / (north.lat - 60)).toBeCloseTo(2, 4);
    expect(east.lat).toBe(60);
  });

  it('rounds coordinates to 7 decimals (about 1 cm)', () => {
    for (const dot of gridDots({ lat: 12.3456789, lng: -98.7654321 }, 5, 2)) {
      expect(Math.round(dot.lat * 1e7) / 1e7).toBe(dot.lat);
      expect(Math.round(dot.lng * 1e7) / 1e7).toBe(dot.lng);
    }
  });
});

describe('a scan', () => {
  // The client `a` and three competitors, searched at the centre and two ring dots:
  //   centre: b, a, c      (a ranks 2)
  //   dot-1:  a, b         (a ranks 1)
  //   dot-2:  c, d, b      (a absent)
  const a = place('a', { reviews: 40, photos: 10 });
  const b = place('b', { reviews: 55, photos: 30 });
  const c = place('c', { reviews: 20, photos: 5 });
  const d = place('d', { reviews: 90, photos: 90 });
  const results = [at(centre, b, a, c), at(ringDot(1), a, b), at(ringDot(2), c, d, b)];

  it('gives the client its rank at each dot', () => {
    expect(computeScan(results, 'a').dots.map(({ dot, rank }) => [dot.dotId, rank])).toEqual([
      ['dot-0', 2],
      ['dot-1', 1],
      ['dot-2', null],
    ]);
  });

  it('counts the client figures', () => {
    const { client } = computeScan(results, 'a');
    expect(client).toEqual({
      // Seen at the centre and dot-1, both in the top 3.
      appearances: 2,
      top3appearances: 2,
      top5appearances: 2,
      top10appearances: 2,
      centerRank: 2,
      place: a,
      // Rank 1 at dot-1, rank 2 at the centre.
      dots: { dot1: 1, dot2: 1, dot3: 0, dot4: 0, dot5: 0 },
    });
  });

  it('ranks competitors by appearances', () => {
    // b: 3 dots (ranks 1, 2, 3); c: 2 (ranks 3, 1); d: 1 (rank 2, not at the centre).
    expect(computeScan(results, 'a').competitors.map(({ place: p, ...figures }) => ({ id: p.placeId, ...figures }))).toEqual([
      { id: 'b', centerRank: 1, appearances: 3, top3appearances: 3, top5appearances: 3, top10appearances: 3 },
      { id: 'c', centerRank: 3, appearances: 2, top3appearances: 2, top5appearances: 2, top10appearances: 2 },
      { id: 'd', centerRank: null, appearances: 1, top3appearances: 1, top5appearances: 1, top10appearances: 1 },
    ]);
  });

  it('needs nothing to reach a top the client is already in', () => {
    // At the centre a is 2nd: the top 1 needs one review more than b (55 + 1 - 40 = 16) and b's photos (30 - 10 = 20);
    // the top 3 and top 5 it already has.
    expect(computeScan(results, 'a').strategy).toEqual({ reviewsToTop: { 1: 16, 3: 0, 5: 0 }, imagesToTop: { 1: 20, 3: 0, 5: 0 } });
  });

  it('aims at the last business shown when the centre shows fewer than N others', () => {
    // a is not at the centre (b 55/30, c 20/5 are): top 1 is b: 55 + 1 - 40 = 16 reviews, 30 - 10 = 20 photos.
    // Top 3 and 5: only two others, so c: 20 + 1 - 40 < 0 -> 0 reviews, 5 - 10 < 0 -> 0 photos.
    const scan = computeScan([at(centre, b, c), at(ringDot(1), a)], 'a');
    expect(scan.strategy).toEqual({ reviewsToTop: { 1: 16, 3: 0, 5: 0 }, imagesToTop: { 1: 20, 3: 0, 5: 0 } });
    // With c at 48 reviews and 12 photos: top 3 and 5 need 48 + 1 - 40 = 9 reviews and 12 - 10 = 2 photos.
    const closer = computeScan([at(centre, b, place('c', { reviews: 48, photos: 12 })), at(ringDot(1), a)], 'a');
    expect(closer.strategy).toEqual({ reviewsToTop: { 1: 16, 3: 9, 5: 9 }, imagesToTop: { 1: 20, 3: 2, 5: 2 } });
  });

  it('counts from nothing for a client no search showed', () => {
    const scan = computeScan(results, 'unseen');
    expect(scan.client).toMatchObject({ appearances: 0, top3appearances: 0, centerRank: null, place: null, dots: { dot1: 0, dot2: 0, dot3: 0, dot4: 0, dot5: 0 } });
    expect(scan.dots.every(({ rank }) => rank === null)).toBe(true);
    // Every business seen is a competitor; top 1 is b with 55 + 1 reviews and 30 photos; top 3 is c (third at the centre).
    expect(scan.competitors).toHaveLength(4);
    expect(scan.strategy).toEqual({ reviewsToTop: { 1: 56, 3: 21, 5: 21 }, imagesToTop: { 1: 30, 3: 5, 5: 5 } });
  });

  it('needs nothing when the centre showed nothing', () => {
    expect(computeScan([at(centre), at(ringDot(1), b, a)], 'a').strategy).toEqual({ reviewsToTop: { 1: 0, 3: 0, 5: 0 }, imagesToTop: { 1: 0, 3: 0, 5: 0 } });
    expect(computeScan([], 'a').competitors).toEqual([]);
  });

  it('counts top 3, 5 and 10 and exact ranks at their boundaries', () => {
    // The client at ranks 3, 4, 5, 6, 10 and 11 of six ring dots (others fill the ranks before it).
    const fillers = Array.from({ length: 10 }, (_, i) => place(`filler-${i}`));
    const ranks = [3, 4, 5, 6, 10, 11];
    const scan = computeScan(ranks.map((rank, i) => at(ringDot(i + 1), ...fillers.slice(0, rank - 1), a)), 'a');
    expect(scan.client).toMatchObject({
      appearances: 6,
      top3appearances: 1, // 3
      top5appearances: 3, // 3, 4, 5
      top10appearances: 5, // all but 11
      centerRank: null,
      dots: { dot1: 0, dot2: 0, dot3: 1, dot4: 1, dot5: 1 },
    });
    expect(scan.dots.map(({ rank }) => rank)).toEqual(ranks);
  });

  it('breaks ties by centre rank, then by name', () => {
    // Each competitor appears once: y and x at the centre (y 2nd, x 3rd), then m and k elsewhere, ordered by name.
    const [k, m, x, y] = [place('k'), place('m'), place('x'), place('y')];
    const scan = computeScan([at(centre, a, y, x), at(ringDot(1), m, k)], 'a');
    expect(scan.competitors.map(({ place: p }) => p.placeId)).toEqual(['y', 'x', 'k', 'm']);
  });
});
