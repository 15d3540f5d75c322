export * from './beta.client';
export * from './beta.errors';
export * from './beta.oauth';
export * from './beta.types';
