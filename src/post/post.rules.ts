import { DomainError } from '../errors/domain-error';
import type { Location } from '../location/location.entity';
import type { PostParams } from './post-params.types';
import { ActionType, TopicType } from './post.enums';
import { isCalendarDate, rfc3339Instant } from '../shared/calendar';

const SUMMARY_MAX = 1500;

/** More names than any summary of 1500 characters can use sensibly. */
export const MAX_MASK_NAMES = 50;

const PLACEHOLDER = /\{([A-Za-z0-9_]+)\}/g;

/**
 * Replaces each {name} of the mask in the summary with parameters[name]; a masked name without a value is a 400.
 * One pass over the summary as written: a value is inserted as it is and never searched for placeholders again,
 * so no input can make the text grow by more than its own size. The length of the result is computed before it
 * is built, and refused (400) above `maxLength`.
 */
export function applyParameterMask(
  summary: string | null | undefined,
  mask: string | null | undefined,
  parameters: Record<string, unknown> | null | undefined,
  maxLength: number,
): string | null | undefined {
  if (!mask) return summary;
  const names = mask.split(',').map((name) => name.trim()).filter(Boolean);
  if (names.length > MAX_MASK_NAMES) throw DomainError.badInput(`parameterMask may name at most ${MAX_MASK_NAMES} placeholders`);
  const values = new Map<string, string>();
  for (const name of names) {
    if (values.has(name)) throw DomainError.badInput(`parameterMask names ${name} more than once`);
    const value = parameters && Object.hasOwn(parameters, name) ? parameters[name] : undefined;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw DomainError.badInput(`parameters.${name} is required by parameterMask (a string or number)`);
    }
    values.set(name, String(value));
  }
  const text = summary ?? '';
  let length = text.length;
  for (const match of text.matchAll(PLACEHOLDER)) {
    const value = values.get(match[1]!);
    if (value !== undefined) length += value.length - match[0].length;
  }
  if (length > maxLength) {
    throw DomainError.badInput(`params.summary must be at most ${maxLength} characters after placeholders are replaced`);
  }
  return text.replace(PLACEHOLDER, (placeholder, name: string) => values.get(name) ?? placeholder);
}

/**
 * The content rules of the alpha provider and of the document, checked before anything is stored so a caller
 * learns of a bad post at once (400), not from a later ERROR state.
 */
export function preparePostParams(
  input: { params: PostParams; useLocationWebsiteUrl?: boolean | null; parameterMask?: string | null; parameters?: Record<string, unknown> | null },
  location: Pick<Location, 'websiteUri'>,
  now: Date,
): { params: PostParams; scheduledTime: Date | null } {
  const params: PostParams = structuredClone({ ...input.params });
  params.topicType ??= TopicType.STANDARD;
  params.summary = applyParameterMask(params.summary, input.parameterMask, input.parameters, SUMMARY_MAX);
  if (params.topicType === TopicType.STANDARD && !params.summary?.trim()) {
    throw DomainError.badInput('params.summary is required for STANDARD posts');
  }
  if ((params.topicType === TopicType.EVENT || params.topicType === TopicType.OFFER) && !params.event?.schedule) {
    throw DomainError.badInput(`params.event.schedule is required for ${params.topicType} posts`);
  }
  for (const which of ['startDate', 'endDate'] as const) {
    const date = params.event?.schedule?.[which];
    if (date && !isCalendarDate(date.year, date.month, date.day)) {
      throw DomainError.badInput(`params.event.schedule.${which} is not a date that exists`);
    }
  }
  if (params.topicType === TopicType.EVENT && !params.event?.title) {
    throw DomainError.badInput('params.event.title is required for EVENT posts');
  }
  if (params.topicType === TopicType.ALERT && !params.alertType) {
    throw DomainError.badInput('params.alertType is required for ALERT posts');
  }
  if (input.useLocationWebsiteUrl) {
    if (!location.websiteUri) throw DomainError.badInput('use_location_website_url is true but the location has no website');
    params.callToAction = { actionType: params.callToAction?.actionType ?? ActionType.LEARN_MORE, url: location.websiteUri };
  }
  if (params.callToAction) {
    const { actionType, url } = params.callToAction;
    if (actionType === ActionType.CALL && url) throw DomainError.badInput('params.callToAction.url must be absent for CALL');
    if (actionType !== ActionType.CALL && !url) throw DomainError.badInput(`params.callToAction.url is required for ${actionType}`);
  }
  let scheduledTime: Date | null = null;
  if (params.scheduledTime) {
    const time = rfc3339Instant(params.scheduledTime);
    if (time === undefined) throw DomainError.badInput('params.scheduledTime must be an RFC 3339 timestamp of a time that exists');
    if (time <= now.getTime()) throw DomainError.badInput('params.scheduledTime must be in the future');
    scheduledTime = new Date(time);
    params.scheduledTime = scheduledTime.toISOString();
  }
  return { params: dropNulls(params), scheduledTime };
}

/** Stored and sent params carry only the fields given: the provider treats null and absent differently. */
function dropNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map(dropNulls) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [k, dropNulls(v)]),
    ) as T;
  }
  return value;
}
