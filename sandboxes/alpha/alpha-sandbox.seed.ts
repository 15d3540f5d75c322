import type { AlphaLocation, AlphaTimePeriod } from '../../src/providers/alpha/alpha.types';
import type { AlphaSandboxIdentityInput } from './alpha-sandbox.accounts';

/**
 * The identities, accounts, locations and reviews a sandbox starts with (and returns to on reset), so that a person
 * can walk through the consent page and see a business at once. Names are fixed, so docs and tests can use them;
 * review times are counted back from the sandbox clock, so they look recent whatever the clock says.
 */

export const ALPHA_SANDBOX_SEED = {
  alice: {
    sub: 'alpha-user-alice',
    email: 'alice@sandbox.example',
    accounts: ['accounts/1001'],
    locations: ['accounts/1001/locations/10011', 'accounts/1001/locations/10012'],
  },
  bob: { sub: 'alpha-user-bob', email: 'bob@sandbox.example', accounts: ['accounts/2002'], locations: [] },
  carol: {
    sub: 'alpha-user-carol',
    email: 'carol@sandbox.example',
    accounts: ['accounts/3003', 'accounts/3004'],
    locations: ['accounts/3003/locations/30031', 'accounts/3004/locations/30041'],
  },
} as const;

const DAY_MS = 24 * 3600_000;

function weekdays(open: number, close: number): AlphaTimePeriod[] {
  return (['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'] as const).map((day) => ({
    openDay: day,
    openTime: { hours: open },
    closeDay: day,
    closeTime: { hours: close },
  }));
}

function shop(input: {
  title: string;
  storeCode: string;
  street: string;
  postalCode: string;
  phone: string;
  website: string;
  latlng: { latitude: number; longitude: number };
  primary: { name: string; displayName: string };
}): AlphaLocation {
  return {
    title: input.title,
    storeCode: input.storeCode,
    languageCode: 'de',
    phoneNumbers: { primaryPhone: input.phone },
    categories: { primaryCategory: input.primary, additionalCategories: [{ name: 'gcid:cafe', displayName: 'Café' }] },
    storefrontAddress: {
      regionCode: 'DE',
      postalCode: input.postalCode,
      administrativeArea: 'Berlin',
      locality: 'Berlin',
      addressLines: [input.street],
    },
    websiteUri: input.website,
    regularHours: {
      periods: [
        ...weekdays(7, 18),
        { openDay: 'SATURDAY', openTime: { hours: 8 }, closeDay: 'SATURDAY', closeTime: { hours: 14 } },
      ],
    },
    profile: { description: `${input.title}: bread, pastries and coffee, baked on site every morning.` },
    latlng: input.latlng,
  };
}

/** The seed as control input, its times counted back from `now`. */
export function alphaSandboxSeed(now: number): AlphaSandboxIdentityInput[] {
  const daysAgo = (days: number) => new Date(now - days * DAY_MS).toISOString();
  const bakery = { name: 'gcid:bakery', displayName: 'Bakery' };
  const coffee = { name: 'gcid:coffee_shop', displayName: 'Coffee shop' };
  return [
    {
      sub: ALPHA_SANDBOX_SEED.alice.sub,
      email: ALPHA_SANDBOX_SEED.alice.email,
      name: 'Alice Example',
      picture: 'https://alpha.example/avatars/alice.png',
      accounts: [
        {
          accountId: '1001',
          accountName: 'Alice Bakery Group',
          type: 'LOCATION_GROUP',
          verificationState: 'VERIFIED',
          locations: [
            {
              locationId: '10011',
              location: shop({
                title: 'Alice Bakery Kreuzberg',
                storeCode: 'alice-1',
                street: 'Oranienstraße 25',
                postalCode: '10999',
                phone: '+49 30 1234501',
                website: 'https://alice-bakery.example/kreuzberg',
                latlng: { latitude: 52.5016, longitude: 13.4187 },
                primary: bakery,
              }),
              reviews: [
                {
                  reviewId: 'alice1-maja',
                  reviewer: { displayName: 'Maja K.', profilePhotoUrl: 'https://alpha.example/avatars/maja.png' },
                  starRating: 'FIVE',
                  comment: 'Best sourdough in Kreuzberg. The staff remember my order.',
                  createTime: daysAgo(30),
                  reviewReply: {
                    comment: 'Thank you, Maja! See you on Saturday.',
                    state: 'APPROVED',
                    updateTime: daysAgo(29),
                  },
                },
                {
                  reviewId: 'alice1-jonas',
                  reviewer: { displayName: 'Jonas B.' },
                  starRating: 'FOUR',
                  comment: 'Great pastries, a bit of a queue on Saturdays.',
                  createTime: daysAgo(21),
                },
                {
                  reviewId: 'alice1-lea',
                  reviewer: { displayName: 'Lea S.' },
                  starRating: 'THREE',
                  comment: 'Good bread; the coffee could be better.',
                  createTime: daysAgo(14),
                },
                {
                  reviewId: 'alice1-tom',
                  reviewer: { displayName: 'Tom R.' },
                  starRating: 'TWO',
                  comment: 'The croissants were stale in the afternoon & nobody said "sorry" <sigh>.',
                  createTime: daysAgo(7),
                },
                {
                  reviewId: 'alice1-anonymous',
                  reviewer: { isAnonymous: true },
                  starRating: 'ONE',
                  createTime: daysAgo(3),
                },
                {
                  reviewId: 'alice1-noor',
                  reviewer: { displayName: 'Noor A.' },
                  starRating: 'FIVE',
                  comment: 'Lovely cinnamon buns!',
                  createTime: daysAgo(1),
                },
              ],
            },
            {
              locationId: '10012',
              location: shop({
                title: 'Alice Bakery Mitte',
                storeCode: 'alice-2',
                street: 'Torstraße 100',
                postalCode: '10119',
                phone: '+49 30 1234502',
                website: 'https://alice-bakery.example/mitte',
                latlng: { latitude: 52.5291, longitude: 13.4013 },
                primary: bakery,
              }),
              reviews: [
                {
                  reviewId: 'alice2-ben',
                  reviewer: { displayName: 'Ben W.' },
                  starRating: 'FOUR',
                  comment: 'Nice spot for breakfast.',
                  createTime: daysAgo(10),
                },
              ],
            },
          ],
        },
      ],
    },
    {
      sub: ALPHA_SANDBOX_SEED.bob.sub,
      email: ALPHA_SANDBOX_SEED.bob.email,
      name: 'Bob Example',
      picture: 'https://alpha.example/avatars/bob.png',
      accounts: [
        { accountId: '2002', accountName: 'Bob Without Shops', type: 'PERSONAL', verificationState: 'VERIFIED' },
      ],
    },
    {
      sub: ALPHA_SANDBOX_SEED.carol.sub,
      email: ALPHA_SANDBOX_SEED.carol.email,
      name: 'Carol Example',
      picture: 'https://alpha.example/avatars/carol.png',
      accounts: [
        {
          accountId: '3003',
          accountName: 'Carol Coffee North',
          type: 'LOCATION_GROUP',
          verificationState: 'VERIFIED',
          locations: [
            {
              locationId: '30031',
              location: shop({
                title: 'Carol Coffee Prenzlauer Berg',
                storeCode: 'carol-north',
                street: 'Kastanienallee 12',
                postalCode: '10435',
                phone: '+49 30 3003001',
                website: 'https://carol-coffee.example/north',
                latlng: { latitude: 52.5386, longitude: 13.4097 },
                primary: coffee,
              }),
              reviews: [
                {
                  reviewId: 'carol-north-ida',
                  reviewer: { displayName: 'Ida M.' },
                  starRating: 'FIVE',
                  comment: 'Excellent flat white.',
                  createTime: daysAgo(4),
                },
              ],
            },
          ],
        },
        {
          accountId: '3004',
          accountName: 'Carol Coffee South',
          type: 'LOCATION_GROUP',
          verificationState: 'VERIFIED',
          locations: [
            {
              locationId: '30041',
              location: shop({
                title: 'Carol Coffee Neukölln',
                storeCode: 'carol-south',
                street: 'Weserstraße 40',
                postalCode: '12045',
                phone: '+49 30 3004001',
                website: 'https://carol-coffee.example/south',
                latlng: { latitude: 52.4873, longitude: 13.4329 },
                primary: coffee,
              }),
              reviews: [
                {
                  reviewId: 'carol-south-emil',
                  reviewer: { displayName: 'Emil F.' },
                  starRating: 'THREE',
                  comment: 'Fine coffee, slow service.',
                  createTime: daysAgo(6),
                },
              ],
            },
          ],
        },
      ],
    },
  ];
}
