/**
 * The alpha provider's own shapes (its local-post resource, modelled on a business-profile API), spelled as the
 * provider spells them. Our post records keep these as `params`; nothing here is our interface.
 */

export const ALPHA_TOPIC_TYPES = ['STANDARD', 'EVENT', 'OFFER', 'ALERT'] as const;
export type AlphaTopicType = (typeof ALPHA_TOPIC_TYPES)[number];

export const ALPHA_ACTION_TYPES = ['BOOK', 'ORDER', 'SHOP', 'LEARN_MORE', 'SIGN_UP', 'CALL'] as const;
export type AlphaActionType = (typeof ALPHA_ACTION_TYPES)[number];

export const ALPHA_POST_STATES = ['LIVE', 'PROCESSING', 'REJECTED'] as const;
export type AlphaPostState = (typeof ALPHA_POST_STATES)[number];

/** A calendar date without a time zone. */
export interface AlphaDate {
  year: number;
  /** 1-12 */
  month: number;
  /** 1-31 */
  day: number;
}

/** A time of day without a time zone. */
export interface AlphaTimeOfDay {
  hours: number;
  minutes: number;
  seconds: number;
}

export interface AlphaCallToAction {
  actionType: AlphaActionType;
  /** Absent for CALL (the profile's phone number is used); an http(s) URL otherwise. */
  url?: string;
}

export interface AlphaMediaItem {
  /** PHOTO or VIDEO. */
  mediaFormat: string;
  sourceUrl: string;
}

export interface AlphaEventSchedule {
  startDate: AlphaDate;
  endDate: AlphaDate;
  startTime?: AlphaTimeOfDay;
  endTime?: AlphaTimeOfDay;
}

export interface AlphaEvent {
  title?: string;
  schedule?: AlphaEventSchedule;
}

export interface AlphaOffer {
  couponCode?: string;
  redeemOnlineUrl?: string;
  termsConditions?: string;
}

/** A local post. The output-only fields (name, state, searchUrl, createTime, updateTime) are ignored on create. */
export interface AlphaLocalPost {
  /** `accounts/{a}/locations/{l}/localPosts/{p}` */
  name?: string;
  languageCode?: string;
  summary?: string;
  topicType?: AlphaTopicType;
  callToAction?: AlphaCallToAction;
  media?: AlphaMediaItem[];
  event?: AlphaEvent;
  offer?: AlphaOffer;
  /** ALERT posts only, e.g. ALERT_TYPE_UNSPECIFIED. */
  alertType?: string;
  /** RFC 3339; a future time publishes the post then. */
  scheduledTime?: string;
  state?: AlphaPostState;
  searchUrl?: string;
  /** RFC 3339 */
  createTime?: string;
  /** RFC 3339 */
  updateTime?: string;
}

/** The provider's error envelope: `{ error: { code, message, status, details } }`. */
export interface AlphaErrorEnvelope {
  error: {
    /** The HTTP status, repeated. */
    code: number;
    message: string;
    /** A canonical reason such as RESOURCE_EXHAUSTED or INVALID_ARGUMENT. */
    status: string;
    details: unknown[];
  };
}
