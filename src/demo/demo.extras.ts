import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { BetaBrand } from '../beta-brand/beta-brand.entity';
import { BetaSyncStatus, OwnershipType } from '../beta-brand/beta-brand.enums';
import { CompetitorScan } from '../competitor-scan/competitor-scan.entity';
import { CompetitorScanStatus } from '../competitor-scan/competitor-scan.enums';
import { scanFigures } from '../competitor-scan/competitor-scan.worker';
import { computeScan, gridDots, type ScanPlace } from '../competitor-scan/scan.compute';
import type { Location } from '../location/location.entity';
import type { Organization } from '../organization/organization.entity';

/**
 * The demo's beta brand and completed competitor scan. The brand is not at the beta provider until a beta consent of
 * the organization links its company (it says so in syncError): the demo's preparation links it where the provider
 * lets it (src/demo/demo.prepare.ts), then pushes the brand. The scan's figures are computed as a real scan's are
 * (src/competitor-scan/scan.compute.ts) from a small fixed market around the location.
 */

const KM_PER_DEGREE = 111.195;

/** The fixed market: name, kilometres north and east of the location, rating, reviews, photos. */
const MARKET: [string, number, number, number, number, number][] = [
  ['Bean There Coffee', 0.3, -0.2, 4.7, 312, 40],
  ['Springfield Roasters', -0.8, 0.9, 4.5, 190, 22],
  ['Daily Grind', 1.6, 0.4, 4.2, 75, 9],
  ['Kwik-E Coffee', -1.9, -1.7, 3.8, 410, 3],
];

const CLIENT = { rating: 4.3, reviews: 87, photos: 12 };

/** The beta company the demo's brand belongs to: Acme Coffee Company of the beta sandbox. */
export const DEMO_BETA_COMPANY = 'company-1001';

export function seedDemoBrand(tx: EntityManager, organization: Organization, location: Location, now: Date): BetaBrand {
  return tx.create(BetaBrand, {
    segmentId: `brand-${randomUUID()}`,
    organization,
    betaCompanyId: DEMO_BETA_COMPANY,
    betaSyncStatus: BetaSyncStatus.FAILED,
    syncError: `Not at the beta provider yet: link ${DEMO_BETA_COMPANY} through the beta consent (POST /oauth/beta/generate-url), then change the brand to push it`,
    brandName: 'Demo Coffee',
    name: 'Demo Coffee (US)',
    countryCode: 'US',
    primaryCategory: 'coffee_shop',
    additionalCategories: ['cafe'],
    websiteUrl: 'https://example.com/demo-coffee',
    ownershipType: OwnershipType.BRAND_OWNER,
    locations: [location.id],
    provisionSource: 'app',
    createdAt: now,
    updatedAt: now,
  });
}

export function seedDemoScan(tx: EntityManager, organization: Organization, location: Location, now: Date): CompetitorScan {
  const center = { lat: location.latitude!, lng: location.longitude! };
  const lngPerKm = 1 / (KM_PER_DEGREE * Math.cos((center.lat * Math.PI) / 180));
  const places: ScanPlace[] = [
    ...MARKET.map(([name, north, east, rating, reviews, photos], index) => ({
      placeId: `demo-competitor-${index + 1}`,
      name,
      address: `${100 + index} Evergreen Terrace, Springfield`,
      categories: ['coffee_shop'],
      rating,
      reviews,
      photos,
      website: null,
      hasPosts: index % 2 === 0,
      lat: center.lat + north / KM_PER_DEGREE,
      lng: center.lng + east * lngPerKm,
    })),
    { placeId: location.placeId!, name: location.name, address: location.address ?? '', categories: ['coffee_shop'], ...CLIENT, website: location.websiteUri, hasPosts: false, ...center },
  ];
  // Each dot ranks what lies within 1.5 km of it, as the sandbox does: rating × ln(1 + reviews) ÷ (1 + km).
  const distanceKm = (a: { lat: number; lng: number }, b: { lat: number; lng: number }) =>
    Math.hypot((a.lat - b.lat) * KM_PER_DEGREE, (a.lng - b.lng) / lngPerKm);
  const results = gridDots(center, 2, 1).map((dot) => ({
    dot,
    places: places
      .map((place) => ({ place, km: distanceKm(dot, place) }))
      .filter(({ km }) => km <= 1.5)
      .sort((a, b) => (b.place.rating * Math.log1p(b.place.reviews)) / (1 + b.km) - (a.place.rating * Math.log1p(a.place.reviews)) / (1 + a.km))
      .map(({ place }) => place),
  }));
  return tx.create(CompetitorScan, {
    organization,
    account: location.account,
    location,
    placeId: location.placeId!,
    text: 'coffee shop',
    radius: 2,
    rings: 1,
    status: CompetitorScanStatus.COMPLETED,
    createdBy: 'demo',
    origin: 'app',
    center,
    ...scanFigures(computeScan(results, location.placeId!), { text: 'coffee shop', placeId: location.placeId! }, location, null),
    createdAt: new Date(now.getTime() - 60_000),
    finishedAt: now,
  });
}
