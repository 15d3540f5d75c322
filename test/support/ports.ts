// The one free-port helper lives beside the database bootstrap the tests and the benchmarks share.
export { freePort } from '../../dev/ports';
