export * from './alpha.client';
export * from './alpha.errors';
export * from './alpha.types';
