import {
  ALPHA_ACTION_TYPES,
  ALPHA_TOPIC_TYPES,
  type AlphaCallToAction,
  type AlphaDate,
  type AlphaEvent,
  type AlphaEventSchedule,
  type AlphaLocalPost,
  type AlphaMediaItem,
  type AlphaOffer,
  type AlphaTimeOfDay,
} from '../../src/providers/alpha/alpha.types';

/**
 * The provider's local-post rules, as the sandbox enforces them on create, and the field checks its location rules
 * (alpha-sandbox.locations.ts) share. Written independently of the client's response checks, so a client that sends
 * what the provider refuses is caught by tests.
 */

export const SUMMARY_MAX_LENGTH = 1500;
export const MEDIA_FORMATS = ['PHOTO', 'VIDEO'] as const;

/** One refused field: rendered as a 400 INVALID_ARGUMENT whose message names the field. */
export class FieldViolation extends Error {
  constructor(
    readonly field: string,
    readonly description: string,
  ) {
    super(`${field}: ${description}`);
  }
}

/** Fields the provider fills in; a client may send them back and they are ignored, as the provider does. */
const OUTPUT_ONLY_FIELDS = ['name', 'state', 'searchUrl', 'createTime', 'updateTime'];
const POST_FIELDS = [
  'languageCode',
  'summary',
  'topicType',
  'callToAction',
  'media',
  'event',
  'offer',
  'alertType',
  'scheduledTime',
  ...OUTPUT_ONLY_FIELDS,
];

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectAt(value: unknown, field: string): JsonObject {
  if (!isObject(value)) throw new FieldViolation(field, 'must be an object');
  return value;
}

/** Unknown names are refused, as the provider refuses them: a misspelt field must not vanish silently. */
export function onlyKnown(value: JsonObject, known: readonly string[], prefix: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new FieldViolation(`${prefix}${key}`, 'unknown field');
  }
}

export function stringAt(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new FieldViolation(field, 'must be a string');
  return value;
}

export function nonEmptyStringAt(value: unknown, field: string): string {
  const text = stringAt(value, field);
  if (text.trim() === '') throw new FieldViolation(field, 'must not be empty');
  return text;
}

export function optionalStringAt(value: unknown, field: string): string | undefined {
  return value === undefined ? undefined : stringAt(value, field);
}

export function enumAt<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new FieldViolation(field, `must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

export function httpUrlAt(value: unknown, field: string): string {
  const text = stringAt(value, field);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new FieldViolation(field, 'must be an http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FieldViolation(field, 'must be an http or https URL');
  return text;
}

export function integerAt(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new FieldViolation(field, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

export function dateAt(value: unknown, field: string): AlphaDate {
  const date = objectAt(value, field);
  onlyKnown(date, ['year', 'month', 'day'], `${field}.`);
  const year = integerAt(date.year, `${field}.year`, 1, 9999);
  const month = integerAt(date.month, `${field}.month`, 1, 12);
  const day = integerAt(date.day, `${field}.day`, 1, 31);
  // Date.UTC rolls 31 February over into March; a real calendar date survives the round trip.
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCMonth() !== month - 1) throw new FieldViolation(field, 'is not a calendar date');
  return { year, month, day };
}

/** Zero-valued fields may be left out, as the provider's own JSON leaves them out. */
function timeAt(value: unknown, field: string): AlphaTimeOfDay {
  const time = objectAt(value, field);
  onlyKnown(time, ['hours', 'minutes', 'seconds', 'nanos'], `${field}.`);
  return {
    hours: integerAt(time.hours ?? 0, `${field}.hours`, 0, 23),
    minutes: integerAt(time.minutes ?? 0, `${field}.minutes`, 0, 59),
    seconds: integerAt(time.seconds ?? 0, `${field}.seconds`, 0, 59),
  };
}

function scheduleAt(value: unknown, field: string): AlphaEventSchedule {
  const schedule = objectAt(value, field);
  onlyKnown(schedule, ['startDate', 'endDate', 'startTime', 'endTime'], `${field}.`);
  const result: AlphaEventSchedule = {
    startDate: dateAt(schedule.startDate, `${field}.startDate`),
    endDate: dateAt(schedule.endDate, `${field}.endDate`),
  };
  if (schedule.startTime !== undefined) result.startTime = timeAt(schedule.startTime, `${field}.startTime`);
  if (schedule.endTime !== undefined) result.endTime = timeAt(schedule.endTime, `${field}.endTime`);
  const instant = (date: AlphaDate, time: AlphaTimeOfDay | undefined) =>
    Date.UTC(date.year, date.month - 1, date.day, time?.hours ?? 0, time?.minutes ?? 0, time?.seconds ?? 0);
  if (instant(result.endDate, result.endTime) < instant(result.startDate, result.startTime)) {
    throw new FieldViolation(`${field}.endDate`, 'must not be before the start');
  }
  return result;
}

function callToActionAt(value: unknown): AlphaCallToAction {
  const cta = objectAt(value, 'callToAction');
  onlyKnown(cta, ['actionType', 'url'], 'callToAction.');
  const actionType = enumAt(cta.actionType, ALPHA_ACTION_TYPES, 'callToAction.actionType');
  if (actionType === 'CALL') {
    if (cta.url !== undefined) throw new FieldViolation('callToAction.url', 'must be absent when actionType is CALL');
    return { actionType };
  }
  if (cta.url === undefined) throw new FieldViolation('callToAction.url', `is required when actionType is ${actionType}`);
  return { actionType, url: httpUrlAt(cta.url, 'callToAction.url') };
}

function mediaAt(value: unknown): AlphaMediaItem[] {
  if (!Array.isArray(value)) throw new FieldViolation('media', 'must be an array');
  return value.map((entry, index) => {
    const field = `media[${index}]`;
    const item = objectAt(entry, field);
    onlyKnown(item, ['mediaFormat', 'sourceUrl'], `${field}.`);
    return {
      mediaFormat: enumAt(item.mediaFormat, MEDIA_FORMATS, `${field}.mediaFormat`),
      sourceUrl: httpUrlAt(item.sourceUrl, `${field}.sourceUrl`),
    };
  });
}

function offerAt(value: unknown): AlphaOffer {
  const offer = objectAt(value, 'offer');
  onlyKnown(offer, ['couponCode', 'redeemOnlineUrl', 'termsConditions'], 'offer.');
  const result: AlphaOffer = {};
  const couponCode = optionalStringAt(offer.couponCode, 'offer.couponCode');
  if (couponCode !== undefined) result.couponCode = couponCode;
  if (offer.redeemOnlineUrl !== undefined) result.redeemOnlineUrl = httpUrlAt(offer.redeemOnlineUrl, 'offer.redeemOnlineUrl');
  const termsConditions = optionalStringAt(offer.termsConditions, 'offer.termsConditions');
  if (termsConditions !== undefined) result.termsConditions = termsConditions;
  return result;
}

/** The post as stored: only known input fields, normalized (times in UTC, zero time fields filled in). */
export function validateLocalPost(body: unknown): AlphaLocalPost {
  if (!isObject(body)) throw new FieldViolation('localPost', 'the request body must be a JSON object');
  onlyKnown(body, POST_FIELDS, '');

  // An absent topic type is a plain post, as on the provider.
  const topicType = body.topicType === undefined ? 'STANDARD' : enumAt(body.topicType, ALPHA_TOPIC_TYPES, 'topicType');
  const post: AlphaLocalPost = { topicType };

  const languageCode = optionalStringAt(body.languageCode, 'languageCode');
  if (languageCode !== undefined) post.languageCode = languageCode;

  const summary = optionalStringAt(body.summary, 'summary');
  if (summary !== undefined && summary.length > SUMMARY_MAX_LENGTH) {
    throw new FieldViolation('summary', `must be at most ${SUMMARY_MAX_LENGTH} characters`);
  }
  if (topicType === 'STANDARD' && (summary === undefined || summary.trim() === '')) {
    throw new FieldViolation('summary', 'is required for topicType STANDARD');
  }
  if (summary !== undefined) post.summary = summary;

  if (body.callToAction !== undefined) post.callToAction = callToActionAt(body.callToAction);
  if (body.media !== undefined) post.media = mediaAt(body.media);

  if (body.event !== undefined) {
    const event = objectAt(body.event, 'event');
    onlyKnown(event, ['title', 'schedule'], 'event.');
    const result: AlphaEvent = {};
    const title = optionalStringAt(event.title, 'event.title');
    if (title !== undefined) result.title = title;
    if (event.schedule !== undefined) result.schedule = scheduleAt(event.schedule, 'event.schedule');
    post.event = result;
  }
  if (topicType === 'EVENT' && !post.event?.title?.trim()) {
    throw new FieldViolation('event.title', 'is required for topicType EVENT');
  }
  if ((topicType === 'EVENT' || topicType === 'OFFER') && !post.event?.schedule) {
    throw new FieldViolation('event.schedule', `is required for topicType ${topicType}`);
  }

  if (body.offer !== undefined) post.offer = offerAt(body.offer);

  if (body.alertType !== undefined) post.alertType = nonEmptyStringAt(body.alertType, 'alertType');
  if (topicType === 'ALERT' && post.alertType === undefined) {
    throw new FieldViolation('alertType', 'is required for topicType ALERT');
  }

  if (body.scheduledTime !== undefined) {
    const text = stringAt(body.scheduledTime, 'scheduledTime');
    const at = Date.parse(text);
    if (!RFC3339.test(text) || Number.isNaN(at)) throw new FieldViolation('scheduledTime', 'must be an RFC 3339 timestamp');
    post.scheduledTime = new Date(at).toISOString();
  }
  return post;
}
