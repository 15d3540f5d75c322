export * from './alpha.client';
export * from './alpha.errors';
export * from './alpha.oauth';
export * from './alpha.types';
